/** The RFB (VNC) client: `connectVnc` for live connections, `RfbSession` for I/O-free protocol processing. */
export { connectVnc, VncClient, DEFAULT_ENCODINGS, DEFAULT_TIMEOUT_MS } from './client.ts';
export type { ClientState, ConnectOptions, PointerState, ScreenshotOptions, VncClientEvents, WaitForQuietOptions, WaitForUpdateOptions } from './client.ts';
export type { Capture, CaptureFormat, Screenshot } from './screenshot.ts';
export { blendCursor, encodeRgbPng } from './screenshot.ts';
export { RfbSession, DEFAULT_PSEUDO_ENCODINGS } from './session.ts';
export type { SessionEvent, SessionOptions } from './session.ts';
export type { ConnectionState } from './state.ts';
export type { RfbVersion } from './client-messages.ts';
export type { TlsOptions } from './transport.ts';
export { parseVncUrl } from './transport.ts';
export { Framebuffer } from './framebuffer.ts';
export type { EncodingName } from './encodings/index.ts';
export type { Cancellable } from './deadline.ts';
