// promptfoo's assertion engine in-process: `assertions.runAssertions`, the function its
// evaluator calls for every test, timed on the same outputs and assertions as assertly.
//
//   node bench/peer_promptfoo.mjs PROMPTFOO_PACKAGE_DIR INPUT.json VERDICTS.json
//
// INPUT: {"assertions": [...promptfoo assertions...], "outputs": [str, ...], "chunks": int}
//
// It judges every output once, untimed (verdicts, and a warm-up: JIT, lazily loaded modules,
// compiled schemas), writes VERDICTS.json ({"version", "node", "passes": ["1011...", ...],
// "errors"}), prints READY, then serves the suite on stdin/stdout so that its timed passes
// interleave with assertly's and runsight-core's: `PASS k` judges chunk k
// (outputs[k], outputs[k + chunks], ...) and prints `<seconds> <responses>`; `QUIT` ends it.
// Node is single-threaded; each response is awaited in turn, as `check` runs in Python.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const [packageDir, inputPath, verdictsPath] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const promptfoo = await import(pathToFileURL(join(packageDir, pkg.main)).href);
const { runAssertions } = promptfoo.assertions;

const input = JSON.parse(readFileSync(inputPath, 'utf8'));
const { assertions, outputs } = input;
const chunks = input.chunks ?? 1;

async function judge(output) {
  return runAssertions({
    test: { vars: { output }, assert: assertions },
    providerResponse: { output },
  });
}

const passes = [];
let errors = 0;
for (const output of outputs) {
  try {
    const result = await judge(output);
    passes.push(result.componentResults.map((c) => (c.pass ? '1' : '0')).join(''));
  } catch {
    errors += 1;
    passes.push(null);
  }
}
writeFileSync(
  verdictsPath,
  JSON.stringify({ version: pkg.version, node: process.version, passes, errors }),
);
process.stdout.write('READY\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [command, index] = line.trim().split(/\s+/);
  if (command !== 'PASS') break;
  const part = outputs.filter((_, i) => i % chunks === Number(index));
  if (globalThis.gc) globalThis.gc();
  const start = performance.now();
  for (const output of part) {
    try {
      await judge(output);
    } catch {
      // counted in the untimed pass
    }
  }
  process.stdout.write(`${(performance.now() - start) / 1000} ${part.length}\n`);
}
// promptfoo keeps handles (loggers, caches) open; the measurement is done.
process.exit(0);
