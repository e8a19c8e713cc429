/** Replaying recordings: reading `recording/` directories, the client-stream parser, and frames as of any instant. */
export { ClientStreamParser, CLIENT_MSG, inputEvents, isClientPixelFormat, describePixelFormat } from '../../harness/rfb/client-stream.ts';
export type { ClientInputEvent, ClientMessage, ClientStreamOptions } from '../../harness/rfb/client-stream.ts';
export { readRecording, streamFile, MANIFEST } from './reader.ts';
export type { Recording, RecordedConnection, RecordedStream, RecordingWarning, TimeUnit } from './reader.ts';
export { parseClientStream, clientChoices } from './connection.ts';
export { Replayer, iterateFrames, resolveRecordingDir } from './replayer.ts';
export type { Frame, FrameOptions, IterateFramesOptions, VideoFrame } from './replayer.ts';
