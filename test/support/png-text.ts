/**
 * The text a PNG carries in its iTXt chunks (uncompressed), keyword → text: what the simulated
 * image provider writes into its images (simulator/images.ts, `sim-options`).
 */
export function pngText(png: Buffer): Record<string, string> {
  const text: Record<string, string> = {};
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'iTXt') {
      const keywordEnd = data.indexOf(0);
      // keyword NUL, compression flag and method, language tag NUL, translated keyword NUL, text
      const languageEnd = data.indexOf(0, keywordEnd + 3);
      const translatedEnd = data.indexOf(0, languageEnd + 1);
      text[data.toString('latin1', 0, keywordEnd)] = data.toString('utf8', translatedEnd + 1);
    }
    at += 12 + length;
  }
  return text;
}
