/**
 * A text progress bar: redrawn in place on a terminal, one line per tenth (and per phase) otherwise,
 * so CI logs stay short.
 */
export function progressBar(out: NodeJS.WriteStream, width = 30) {
  let phase = '';
  let lastTenth = -1;
  let drawn = false;
  return {
    update(name: string, done: number, total: number) {
      const fraction = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(fraction * width);
      const bar =
        total > 0 ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(fraction * 100)).padStart(3)}%` : '';
      const text = `${bar} ${name} ${total > 0 ? `${done}/${total}` : `${done} rows`}`.trim();
      if (out.isTTY) {
        out.write(`\r${text.padEnd(80)}`);
        drawn = true;
        return;
      }
      const tenth = Math.floor(fraction * 10);
      if (name !== phase || tenth !== lastTenth) out.write(`${text}\n`);
      phase = name;
      lastTenth = tenth;
    },
    done() {
      if (drawn) out.write('\n');
      drawn = false;
    },
  };
}
