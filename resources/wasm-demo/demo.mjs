// Loads the model named by ?model= (default mlp) from ./model/, runs it on
// fixed inputs and shows the outputs and the median time per call. The
// result is also left in <pre id="result"> as JSON, with data-status on
// <body> ("done" or "failed") for a headless browser to read.

const CALLS = 50;

const count = (shape) => shape.reduce((n, size) => n * size, 1);

/** Input `k`: sin(0.37 i + k) / 2, in the input's dtype. */
function input(arrays, v, k) {
  const Type = arrays[v.dtype];
  const data = new Type(count(v.shape));
  for (let i = 0; i < data.length; ++i) {
    const x = Math.sin(0.37 * i + k) * 0.5;
    data[i] = Type === BigInt64Array ? BigInt(Math.round(x * 8)) : Type === Float32Array ||
      Type === Float64Array ? x : Math.round(x * 8);
  }
  return data;
}

function summary(array, shape) {
  const values = Array.from(array, Number);
  return {
    shape,
    first: values.slice(0, 8),
    sum: values.reduce((a, b) => a + b, 0),
  };
}

async function main() {
  const name = new URLSearchParams(location.search).get('model') ?? 'mlp';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a function name: ${name}`);
  const { arrayTypes, load } = await import(`./model/${name}.mjs`);
  const model = await load();
  const signature = model.signature[name];
  const inputs = signature.inputs.map((v, k) => input(arrayTypes, v, k));
  let outputs = model[name](...inputs);
  if (signature.outputs.length === 1) outputs = [outputs];
  const times = [];
  for (let i = 0; i < CALLS; ++i) {
    const start = performance.now();
    model[name](...inputs);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const result = {
    function: name,
    outputs: outputs.map((o, j) => summary(o, signature.outputs[j].shape)),
    msPerCall: times[Math.floor(times.length / 2)],
    calls: CALLS,
  };
  document.getElementById('status').textContent =
    `${name}: ${result.msPerCall.toFixed(3)} ms per call (median of ${CALLS})`;
  document.getElementById('result').textContent = JSON.stringify(result, null, 2);
  document.body.dataset.status = 'done';
}

main().catch((error) => {
  const status = document.getElementById('status');
  status.textContent = `Failed: ${error.message}`;
  status.className = 'error';
  document.body.dataset.status = 'failed';
});
