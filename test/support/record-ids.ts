/**
 * @module
 * The catalogue of malformed RecordIDs (spec: exactly twelve ASCII digits, from 000000000001, no
 * trimming): the domain parser and the HTTP verify endpoint are both held to every entry.
 */
export const MALFORMED_RECORD_IDS: readonly string[] = [
  '1',
  '00000000001',
  '0000000000001',
  'abc',
  '-00000000001',
  '+00000000001',
  ' 000000000001',
  '000000000001 ',
  '000000000001\n',
  '٠٠٠٠٠٠٠٠٠٠٠١',
  '０００００００００００１',
  '000000000000',
  '1e0000000000',
  '0x0000000001',
  '',
]
