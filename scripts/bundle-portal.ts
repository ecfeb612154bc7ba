// Bundles the portal's Explore page (CodeMirror 6, uPlot, web/explore/) into
// dist/portal-assets/, where the compiled server serves it from (src/portal/explore-bundle.ts).
// Part of `npm run build`; prints the sizes (the page's first load).
import { mkdirSync, writeFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { bundleExplore } from '../src/portal/explore-bundle.js'

const out = new URL('../dist/portal-assets/', import.meta.url)
const { js, css } = await bundleExplore()
mkdirSync(out, { recursive: true })
for (const [name, body] of [
  ['explore.js', js],
  ['explore.css', css],
] as const) {
  writeFileSync(new URL(name, out), body)
  const size = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
  console.log(`portal bundle: ${name} ${size(Buffer.byteLength(body))} (${size(gzipSync(body).length)} gzipped)`)
}
