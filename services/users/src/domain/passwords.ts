import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const KEY_LENGTH = 32;
const R = 8;
const P = 1;

function derive(password: string, salt: Buffer, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r: R, p: P, maxmem: 256 * n * R + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** scrypt (memory-hard); the parameters are stored with the hash so the cost can rise later. */
export async function hashPassword(password: string, n: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, n);
  return `scrypt$${n}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string | null, n: number): Promise<boolean> {
  const parts = stored?.split('$');
  if (parts?.length !== 6 || parts[0] !== 'scrypt') {
    // Spend the same time when there is no hash, so timing does not reveal which emails exist.
    await derive(password, randomBytes(16), n);
    return false;
  }
  const key = await derive(password, Buffer.from(parts[4], 'base64'), Number(parts[1]));
  return timingSafeEqual(key, Buffer.from(parts[5], 'base64'));
}
