/**
 * The result grid: a table with a sticky header (column name and Kusto type) whose body renders
 * only the rows in view (plus a margin), so 100,000 rows scroll as smoothly as 10. Long values are
 * cut in the cell and open in full below the grid.
 */
import { cellText, NUMERIC_TYPES, type QueryResult } from './result-values.js'

/** Every body row has this height (CSS keeps it), so the rows in view follow from scrollTop. */
export const ROW_HEIGHT = 30
const OVERSCAN = 12
/** The grid's largest height (CSS max-height: 26rem): a short result takes only the room it needs. */
const VIEW_HEIGHT = 26 * 16
/** Longer cell texts are cut in the grid and open in full on demand. */
const LONG = 60

export interface GridHandle {
  /** Rows currently in the DOM (tests and the screen reader summary use it). */
  renderedRows(): number
}

export function renderGrid(host: HTMLElement, result: QueryResult, openValue: (title: string, text: string) => void): GridHandle {
  host.replaceChildren()
  const table = document.createElement('table')
  const head = table.createTHead().insertRow()
  for (const column of result.columns) {
    const th = document.createElement('th')
    th.scope = 'col'
    th.textContent = column.name
    const type = document.createElement('span')
    type.className = 'coltype'
    type.textContent = column.type
    th.append(type)
    head.append(th)
  }
  const body = table.createTBody()
  host.append(table)
  const topPad = document.createElement('tr')
  const bottomPad = document.createElement('tr')
  for (const pad of [topPad, bottomPad]) {
    pad.className = 'pad'
    pad.setAttribute('aria-hidden', 'true')
    pad.insertCell().colSpan = Math.max(1, result.columns.length)
  }
  let shown: [number, number] = [-1, -1]

  function rowElement(index: number): HTMLTableRowElement {
    const tr = document.createElement('tr')
    tr.dataset['row'] = String(index)
    const row = result.results[index]!
    for (const column of result.columns) {
      const td = document.createElement('td')
      const text = cellText(row[column.name])
      if (NUMERIC_TYPES.has(column.type)) td.className = 'num'
      if (row[column.name] === null || row[column.name] === undefined) {
        td.classList.add('null')
        td.textContent = 'null'
      } else if (text.length > LONG) {
        const button = document.createElement('button')
        button.type = 'button'
        button.className = 'cell-more'
        button.textContent = `${text.slice(0, LONG)}…`
        button.title = 'Show the whole value'
        button.addEventListener('click', () => openValue(`${column.name}, row ${index + 1}`, text))
        td.append(button)
      } else td.textContent = text
      tr.append(td)
    }
    return tr
  }

  function draw(): void {
    const total = result.results.length
    const first = Math.max(0, Math.floor(host.scrollTop / ROW_HEIGHT) - OVERSCAN)
    const last = Math.min(total, Math.ceil((host.scrollTop + Math.max(host.clientHeight, VIEW_HEIGHT)) / ROW_HEIGHT) + OVERSCAN)
    if (first === shown[0] && last === shown[1]) return
    shown = [first, last]
    topPad.hidden = first === 0
    bottomPad.hidden = last === total
    topPad.cells[0]!.style.height = `${first * ROW_HEIGHT}px`
    bottomPad.cells[0]!.style.height = `${(total - last) * ROW_HEIGHT}px`
    const rows: HTMLTableRowElement[] = []
    for (let i = first; i < last; i++) rows.push(rowElement(i))
    body.replaceChildren(topPad, ...rows, bottomPad)
  }

  host.scrollTop = 0
  host.onscroll = () => requestAnimationFrame(draw)
  draw()
  return { renderedRows: () => body.rows.length - 2 }
}
