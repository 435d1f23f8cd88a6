// speedscope-load.js BUNDLE FILE - import FILE with speedscope's own importer
// (importSpeedscopeProfiles, found in the npm package's browser bundle by its
// code) in node, without the page: the bundle runs in a VM context with stub
// DOM globals, its last statement (rendering the app) cut off. Prints per
// profile speedscope's name, unit, total weight and every frame's self and
// total weight as JSON. Used by tests/report-exports.t.
const fs = require('fs'), vm = require('vm');
const [bundlePath, file] = process.argv.slice(2);
let src = fs.readFileSync(bundlePath, 'utf8');
const m = src.match(/function (\w+)\(t\)\{return\{name:t\.name\|\|t\.profiles\[0\]\.name/);
if (!m) { console.error('importer not found in the bundle'); process.exit(2); }
const end = src.lastIndexOf('console.log(`speedscope v');
if (end < 0) { console.error('bundle end not found'); process.exit(2); }
src = src.slice(0, end) + `globalThis.__import=${m[1]};})();`;
const stub = new Proxy(function () {}, { get: (t, k) => k === Symbol.toPrimitive ? () => '' : stub, apply: () => stub, construct: () => stub });
const ctx = { console, Math, JSON, Map, Set, WeakMap, Promise, Symbol, Uint8Array, Float32Array, Int32Array, ArrayBuffer, DataView, TextDecoder, TextEncoder, setTimeout, clearTimeout };
ctx.window = ctx; ctx.self = ctx; ctx.document = stub; ctx.navigator = { userAgent: 'node', platform: 'Linux' }; ctx.location = { hash: '', search: '', href: '' };
ctx.localStorage = stub; ctx.matchMedia = () => ({ matches: false, addEventListener() {}, addListener() {} }); ctx.addEventListener = () => {}; ctx.requestAnimationFrame = () => 0;
vm.createContext(ctx);
vm.runInContext(src, ctx);
const g = ctx.__import(JSON.parse(fs.readFileSync(file, 'utf8')));
const out = { name: g.name, profiles: [] };
for (const p of g.profiles) {
  const frames = {};
  p.forEachFrame(f => { if (f.getTotalWeight() || f.getSelfWeight()) frames[f.name] = [f.getSelfWeight(), f.getTotalWeight()]; });
  out.profiles.push({ name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), frames });
}
console.log(JSON.stringify(out));
