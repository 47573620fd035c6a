// RUN: %cuvil_opt %s --split-input-file --cuvil-static-buffers="target=c keep-alignment=0" --verify-diagnostics | FileCheck %s
// RUN: not %cuvil_opt %s --split-input-file --cuvil-static-buffers="target=wasm bounded-views=1" 2>&1 | FileCheck %s --check-prefix=ALIGNED

// An allocation becomes a private uninitialized global (no alignment, which
// C99 cannot state), its dealloc goes, and a copy becomes loads and stores.
// CHECK: memref.global "private" @cuvil_buffer : memref<4x8xf32> = uninitialized
// CHECK-NOT: alignment
// CHECK-LABEL: func.func @buffers
// CHECK: %[[BUF:.*]] = memref.get_global @cuvil_buffer : memref<4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[V:.*]] = memref.load %[[BUF]][%[[I]], %[[J]]]
// CHECK: memref.store %[[V]], %arg1[%[[I]], %[[J]]]
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
func.func @buffers(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  memref.copy %x, %a : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %a, %out : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %a : memref<4x8xf32>
  return
}

// -----

// Two allocations get two names; a constant global loses its alignment.
// CHECK-DAG: memref.global "private" @cuvil_buffer : memref<2xf32> = uninitialized
// CHECK-DAG: memref.global "private" @cuvil_buffer_0 : memref<3xi32> = uninitialized
// CHECK-DAG: memref.global "private" constant @table : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>{{$}}
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]> {alignment = 64 : i64}
func.func @two() {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<3xi32>
  return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @+1 {{target compiles static shapes only, and this buffer has type 'memref<?xf32>'}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// The arena cuvil-plan-memory made becomes one global of its size, aligned
// (keep-alignment=1, the default); views of it stay, and so do conditional
// deallocations' owners: every dealloc goes.
// ALIGNED: memref.global "private" @cuvil_buffer : memref<2048xi8> = uninitialized {alignment = 64 : i64}
// ALIGNED-LABEL: func.func @arena
// ALIGNED: %[[ARENA:.*]] = memref.get_global @cuvil_buffer : memref<2048xi8>
// ALIGNED: memref.view %[[ARENA]]
// ALIGNED-NOT: memref.dealloc
func.func @arena(%c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %arena = memref.alloc() {alignment = 64 : i64} : memref<2048xi8>
  %a = memref.view %arena[%c0][] : memref<2048xi8> to memref<512xf32>
  %v = memref.load %a[%c0] : memref<512xf32>
  scf.if %c {
    memref.dealloc %arena : memref<2048xi8>
  }
  return %v : f32
}

// -----

// A remainder tile's buffer (sizes bounded by affine.min) with bounded-views
// (wasm): a byte global of the bound (32x8 floats), viewed at its sizes.
// Without it (c), the buffer is refused.
// ALIGNED: memref.global "private" @cuvil_buffer : memref<1024xi8> = uninitialized {alignment = 64 : i64}
// ALIGNED-LABEL: func.func @remainder
// ALIGNED: %[[RAW:.*]] = memref.get_global @cuvil_buffer : memref<1024xi8>
// ALIGNED: memref.view %[[RAW]][%{{.*}}][%{{.*}}] : memref<1024xi8> to memref<?x8xf32>
#tail = affine_map<(d0) -> (-d0 + 70, 32)>
func.func @remainder(%i: index) {
  %n = affine.min #tail(%i)
  // expected-error @+1 {{target compiles static shapes only, and this buffer has type 'memref<?x8xf32>'}}
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8xf32>
  return
}
