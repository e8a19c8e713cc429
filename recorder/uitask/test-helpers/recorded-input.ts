/**
 * Test-only: the input events of a recording's first connection, parsed with the replay's reader
 * and client-stream parser (recorder/replay), and the recording's time span.
 */
import { ClientStreamParser, inputEvents, type ClientInputEvent } from '../../../harness/rfb/client-stream.ts';
import { readRecording, type RecordingWarning, type TimeUnit } from '../../replay/reader.ts';

/** Input events of connection 0 and the span of all its chunks (epoch ms). */
export interface RecordedInput {
  events: ClientInputEvent[];
  startAt: number;
  endAt: number;
  source: 'vncua' | 'uitask';
  timeUnit: TimeUnit;
  warnings: RecordingWarning[];
}

/** Read `recordingDir` and parse its client stream chunk by chunk, each chunk at its recorded time. */
export async function recordedInput(recordingDir: string): Promise<RecordedInput> {
  const rec = await readRecording(recordingDir);
  const conn = rec.connections[0];
  if (!conn?.client || !conn.server) throw new Error(`${recordingDir} has no complete connection 0`);
  const parser = new ClientStreamParser();
  const events: ClientInputEvent[] = [];
  const { data, times, ends } = conn.client;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    events.push(...inputEvents(parser.push(data.subarray(from, ends[i]!), times[i]!)));
    from = ends[i]!;
  }
  if (parser.error) throw parser.error;
  const all = [...conn.client.times, ...conn.server.times];
  return { events, startAt: Math.min(...all), endAt: Math.max(...all), source: rec.source, timeUnit: rec.timeUnit, warnings: rec.warnings };
}
