/** Key names, key-combination parsing and exact typing plans (pure; no I/O). */
export {
  KEYSYM,
  KEYSYM_F1,
  KEYSYM_KP_0,
  UNICODE_KEYSYM_BASE,
  isModifierKeysym,
  isOnUsKeymap,
  isPrintableAscii,
  isShiftKeysym,
  isShiftedAscii,
  keysymForChar,
  keysymName,
  shiftedCounterpart,
} from './keysyms.ts';
export type { KeysymName } from './keysyms.ts';
export { parseKeys } from './parse.ts';
export type { KeyChord, KeyCombo } from './parse.ts';
export { PRIME_SETTLE_MS, isPause, keysymsToPrime, planKeyPress, planTypeText } from './plan.ts';
export type { KeyEvent, KeyPause, KeyPlanOptions, KeyStroke } from './plan.ts';
export { allowedKeyNames, lookupKeyName } from './names.ts';
