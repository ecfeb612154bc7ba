/**
 * @module
 * The Explore page's script and stylesheet (CodeMirror 6, uPlot and web/explore/, bundled by
 * esbuild; nothing from a CDN). `npm run build` bundles them into dist/portal-assets/ next to the
 * compiled server, which serves them from there. Run from source (tests, `npm run dev`), the
 * server bundles them once in memory on first use instead. Served under content-hashed names.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

export interface Asset {
  readonly name: string
  readonly body: string
}

export interface ExploreAssets {
  readonly js: Asset
  readonly css: Asset
}

/**
 * Where the browser code lives (web/explore/, its own TypeScript project with the DOM types; only
 * in a checkout) and where `npm run build` puts the bundle.
 */
export const CLIENT_ENTRY = fileURLToPath(new URL('../../web/explore/explore.ts', import.meta.url))
const PREBUILT = new URL('../portal-assets/', import.meta.url)

function hashed(name: string, ext: string, body: string): Asset {
  return { name: `${name}.${createHash('sha256').update(body).digest('hex').slice(0, 10)}.${ext}`, body }
}

/** Bundles the client with esbuild (a development dependency: only used from a checkout and at build time). */
export async function bundleExplore(): Promise<{ js: string; css: string }> {
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome111', 'firefox113', 'safari16.4'],
    write: false,
    outdir: 'out',
    legalComments: 'none',
    logLevel: 'silent',
  })
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? ''
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? ''
  return { js, css }
}

async function load(): Promise<ExploreAssets> {
  let js: string
  let css: string
  try {
    js = await readFile(new URL('explore.js', PREBUILT), 'utf8')
    css = await readFile(new URL('explore.css', PREBUILT), 'utf8')
  } catch {
    ;({ js, css } = await bundleExplore())
  }
  return { js: hashed('explore', 'js', js), css: hashed('explore', 'css', css) }
}

let loading: Promise<ExploreAssets> | undefined

/** The bundle, loaded (or built) once per process. */
export function exploreAssets(): Promise<ExploreAssets> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}
