/**
 * The two checks every compactor HTTP server makes before it trusts a request or an address, in a
 * module of their own so a process that serves only /metrics loads nothing else of the dashboard.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Whether `host` only accepts connections from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** Constant-time equality of two strings of any lengths (compares their SHA-256 digests). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
