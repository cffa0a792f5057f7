/**
 * Bidirectional formatting characters (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM):
 * in a file name they reorder what a reader sees, so that `invoice\u202Egpj.exe` shows as
 * `invoiceexe.jpg`. The class reads the same in JavaScript and in Postgres regular expressions.
 */
export const BIDI_CONTROLS = '[\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]';
const bidiControls = new RegExp(BIDI_CONTROLS, 'g');

/** An attachment's name as it is stored and shown: without bidirectional controls, never empty. */
export const cleanFileName = (name: string) => name.replace(bidiControls, '').trim() || 'file';
