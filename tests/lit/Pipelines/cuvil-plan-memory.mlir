// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-plan-memory))" --split-input-file | FileCheck %s

// %a dies when %c is born, so %c reuses %a's bytes; %b overlaps both.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {cuvil.planned_peak_bytes = 2048 : i64, cuvil.unplanned_bytes = 3072 : i64}
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%c1024{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
func.func @chain(%x: memref<256xf32>, %y: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %y : memref<256xf32> to memref<256xf32>
  memref.dealloc %a : memref<256xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  return
}

// -----

// Must not plan a buffer that escapes through the return.
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: memref.view
// CHECK: %[[R:.*]] = memref.alloc() : memref<16xf32>
// CHECK: return %[[R]]
func.func @escapes(%x: memref<16xf32>) -> memref<16xf32> {
  %t = memref.alloc() : memref<16xf32>
  memref.copy %x, %t : memref<16xf32> to memref<16xf32>
  %r = memref.alloc() : memref<16xf32>
  memref.copy %t, %r : memref<16xf32> to memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  return %r : memref<16xf32>
}

// -----

// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-plan-memory{views=0}))" --split-input-file | FileCheck %s --check-prefix=SHARED

// Without views: %c takes over %a (same type, %a's users done), %b keeps
// its own; %d (another type) too; one dealloc each at the end.
// SHARED-LABEL: func.func @same_types
// SHARED-SAME: cuvil.planned_peak_bytes = 2560 : i64, cuvil.unplanned_bytes = 3584 : i64
// SHARED: %[[A:.*]] = memref.alloc() : memref<256xf32>
// SHARED: memref.copy %arg0, %[[A]]
// SHARED: %[[B:.*]] = memref.alloc() : memref<256xf32>
// SHARED: memref.copy %[[A]], %[[B]]
// SHARED-NOT: memref.alloc() : memref<256xf32>
// SHARED: memref.copy %[[B]], %[[A]]
// SHARED: memref.copy %[[A]], %arg1
// SHARED: %[[D:.*]] = memref.alloc() : memref<128xi32>
// SHARED-NOT: memref.view
// SHARED-DAG: memref.dealloc %[[A]]
// SHARED-DAG: memref.dealloc %[[B]]
// SHARED-DAG: memref.dealloc %[[D]]
// SHARED-NOT: memref.dealloc
// SHARED: return
func.func @same_types(%x: memref<256xf32>, %y: memref<256xf32>, %k: memref<128xi32>) {
  %a = memref.alloc() : memref<256xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.dealloc %a : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %y : memref<256xf32> to memref<256xf32>
  %d = memref.alloc() : memref<128xi32>
  memref.copy %k, %d : memref<128xi32> to memref<128xi32>
  memref.copy %d, %k : memref<128xi32> to memref<128xi32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  memref.dealloc %d : memref<128xi32>
  return
}
