const EXTENSIONS: Record<string, string> = {
  'video/mp4': '.mp4',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/mpeg': '.mp3',
  'application/json': '.json',
  'text/plain': '.txt',
};

/** The file extension stored keys carry, so that a download gets the right Content-Type back. */
export function extensionFor(contentType: string): string {
  return EXTENSIONS[contentType.split(';')[0]!.trim().toLowerCase()] ?? '.bin';
}

export function contentTypeOf(key: string): string {
  const ext = key.slice(key.lastIndexOf('.'));
  return Object.entries(EXTENSIONS).find(([, e]) => e === ext)?.[0] ?? 'application/octet-stream';
}
