/**
 * Typed errors with stable codes. Every code is listed in docs/ERRORS.md;
 * tests assert on `code`, never on message text.
 */

/** Every stable error code vncua can raise. Add new codes here and in docs/ERRORS.md. */
export const ERROR_CODES = {
  // RFB protocol / connection
  RFB_ERR_AUTH_FAILED: 'The server rejected the VNC password.',
  RFB_ERR_AUTH_REQUIRED: 'The server requires a password and none was given.',
  RFB_ERR_UNSUPPORTED_SECURITY: 'The server offered no security type this client supports (None, VNC Authentication).',
  RFB_ERR_UNSUPPORTED_VERSION: 'The server announced an RFB protocol version this client does not speak.',
  RFB_ERR_SERVER_REFUSED: 'The server refused the connection and gave a reason.',
  RFB_ERR_PROTOCOL: 'The server sent a malformed or unexpected message.',
  RFB_ERR_UNSUPPORTED_ENCODING: 'The server sent a rectangle in an encoding this client did not ask for.',
  RFB_ERR_DECODE: 'A rectangle could not be decoded (corrupt zlib, JPEG or PNG data, or out-of-bounds geometry).',
  RFB_ERR_CLOSED: 'The connection closed (before the handshake finished, or while an operation was pending).',
  RFB_ERR_TIMEOUT: 'The operation did not finish within its timeout.',
  RFB_ERR_ABORTED: 'The operation was cancelled through its AbortSignal.',
  RFB_ERR_CONNECT: 'The transport could not connect (refused, unreachable, TLS or WebSocket upgrade failure).',
  RFB_ERR_BAD_URL: "The VNC URL is not ws://, wss:// or tcp://host:port, or holds credentials (the message never repeats the URL's secret parts).",
  RFB_ERR_ILLEGAL_STATE: 'An operation was attempted in a connection state that does not allow it.',
  RFB_ERR_BAD_ARGUMENT: 'A client method was called with an out-of-range argument.',
  // Desktop
  DESKTOP_ERR_MISSING_BINARY: 'A program the desktop needs (Xvnc, websockify, chromium, ...) is not installed.',
  DESKTOP_ERR_START_FAILED: 'The desktop did not come up (X, VNC, websocket bridge or Chromium failed).',
  DESKTOP_ERR_TIMEOUT: 'The desktop did not become ready within its timeout.',
  DESKTOP_ERR_BAD_SIZE: 'The requested screen size is not of the form WxH with sane bounds.',
  DESKTOP_ERR_NOT_RUNNING: 'No desktop recorded by `vncua desktop up` is running.',
  DESKTOP_ERR_ABORTED: 'Starting the desktop was cancelled through its AbortSignal (nothing is left running).',
  DESKTOP_ERR_BAD_PASSWORD: 'A VNC password is empty, unreadable, or was given where `ps` would show it (--password); messages never repeat it.',
  DESKTOP_ERR_STATE_DIR: 'The state dir of `vncua desktop up` is not a directory of this user with mode 0700 (another user could read its tokens).',
  // Traces (execution.json, result.json, error.txt)
  TRACE_ERR_WRITE: 'A trace file could not be written (output directory missing, not writable, or disk full).',
  TRACE_ERR_INVALID: 'A trace entry or trace file does not match the trace schema (names the file, entry index and field).',
  TRACE_ERR_NOT_FOUND: 'No trace file (execution.json, partial_execution.json or result.json) exists at the given path.',
  TRACE_ERR_ILLEGAL_STATE: 'A TraceWriter method was called before open() or after finalize().',
  TRACE_ERR_EXPORT:
    'A trace entry cannot be written in the requested format (e.g. a middle-button click for uitask, whose MouseButton has only left and right; details: entry index and field).',
  TRACE_ERR_EXISTS: 'vncua export-trace would overwrite a file: the output exists (pass --overwrite) or is the trace being read or a trace file of that run.',
  // Output directories (harness/trace/out-dir.ts; --out of vncua run and vncua eval)
  OUTPUT_ERR_NOT_A_DIRECTORY: 'The output path, or one of its parents, is an existing file, not a directory (details: path, file).',
  OUTPUT_ERR_NOT_WRITABLE:
    'The output directory, or the nearest existing parent it would be created in, is not writable (permissions, read-only filesystem; details: path, at, errno), or a run could not be moved aside.',
  OUTPUT_ERR_PSEUDO_FS: 'The output path is on a kernel pseudo-filesystem (/proc, /sys, cgroup, devpts, ...), where run files cannot live (details: path, fs).',
  OUTPUT_ERR_RUN_EXISTS:
    'The output directory already holds a run (execution.json, result.json; for vncua run also partial_execution.json or recording/); nothing was touched: give --overwrite (the Agent option overwrite) to move it aside to DIR.1, ... (details: path, files).',
  // Agent actions (keys, text, pointer)
  ACTION_ERR_UNKNOWN_KEY: 'A key name given to pressKeys is not known (the error lists allowed names and the closest matches).',
  ACTION_ERR_BAD_ARGUMENT: 'An action argument is malformed (e.g. a control character in typeText text, an empty key string).',
  ACTION_ERR_OFF_SCREEN: 'A mouse action was given a position outside the screen (details: argument, value, allowed range).',
  ACTION_ERR_TEXT_NOT_DELIVERED: 'typeText could not deliver some characters: the server dropped them and the CDP fallback (Input.insertText) failed (details: text, characters).',
  ACTION_ERR_FAILED: 'An action failed for an unexpected reason that has no code of its own (an internal error; the message says what happened).',
  // Agent (harness/agent)
  AGENT_ERR_BAD_OPTIONS: 'An Agent constructor option or run() option is missing or invalid (details name the field).',
  AGENT_ERR_CONNECTION_LOST: 'The VNC connection dropped and the one reconnection attempt failed, or it dropped in the middle of an action.',
  AGENT_ERR_CANCELLED: 'The run was cancelled through its AbortSignal while an action was running (or an action was called after that).',
  AGENT_ERR_STEP_TIMEOUT: 'One act() call took longer than the stepTimeoutMs option.',
  AGENT_ERR_ACT_FAILED: 'act() threw something that is not a VncuaError (its message and stack are in error.txt).',
  AGENT_ERR_ILLEGAL_STATE: 'An Agent method was called at the wrong time (an action outside run(), or run() while a run is in progress).',
  AGENT_ERR_STUCK: 'A model adapter ended the run as stuck: the same action repeated, or the same screen seen, N times in a row (status stuck).',
  AGENT_ERR_BUDGET_EXCEEDED: 'A model adapter ran past its wall-clock budget (budgetMs); the run ended with status timeout.',
  AGENT_ERR_COST_CAP:
    "The run's model calls reached its cost cap (maxCostUsd, --max-cost); the run ended with status cost_cap before its next model call (the message gives what was spent).",
  AGENT_ERR_COST_UNKNOWN:
    'A cost cap is set (maxCostUsd, --max-cost, --max-suite-cost) but a model call of the run had no price, so the cap cannot be kept; give the model a price (the prices option, -- --prices FILE). The run ended with status error.',
  RECORDER_ERR_NOT_STARTED: 'The recording proxy could not be started for a run with recording on (details say why); pass record: false to run without it.',
  // CDP success check (harness/cdp)
  CDP_ERR_BAD_SENTINEL: 'The success sentinel is malformed, or the page rejected it (invalid selector, an expression that threw or returned a non-boolean).',
  CDP_ERR_BAD_URL: "The CDP URL is not http://, https://, ws:// or wss://host:port, or holds credentials (the message never repeats the URL's secret parts).",
  CDP_ERR_ABORTED: 'A success check was cancelled through its AbortSignal.',
  CDP_ERR_CLOSED: 'check() was called after the SuccessChecker was closed.',
  CDP_ERR_BAD_ARGUMENT:
    'A SuccessChecker option, a check() option or a waitForPageReady() option is out of range (timeoutMs, connectTimeoutMs, loadTimeoutMs, settleTimeoutMs, quietMs).',
  // Task page readiness (harness/cdp/page-ready.ts): infra errors in vncua eval (retried, never counted against the agent)
  PAGE_ERR_UNREACHABLE: 'The browser could not load the task page: connection refused, DNS failure, TLS failure (details: url, netError such as net::ERR_CONNECTION_REFUSED).',
  PAGE_ERR_HTTP_STATUS: "The task page's main document answered an HTTP status >= 400, e.g. 404 from a static server without a single-page-app fallback (details: url, status).",
  PAGE_ERR_BLANK:
    'The task page showed nothing by the load timeout: still about:blank (the server took the connection but sent nothing), still loading, or loaded with no content (details: url, href, readyState).',
  PAGE_ERR_NOT_SETTLED: 'The task page loaded but its DOM never stayed quiet for the quiet window within the settle timeout (details: url, timeoutMs, quietMs).',
  PAGE_ERR_NO_PAGE: 'The browser listed no page to wait on, or its page connection was lost while waiting for the task page (Chromium did not start, or crashed).',
  PAGE_ERR_ABORTED: 'Waiting for the task page was cancelled through its AbortSignal.',
  // Replaying traces and scripts (harness/agent/apply-action.ts, agents/scripted.ts)
  ACTION_ERR_UNKNOWN_ACTION: 'A trace or script entry names an action vncua does not know (details: index, action, known actions).',
  SCRIPT_ERR_INVALID: "A scripted agent's script is not a JSON list of { action, params } entries (details list one issue per bad entry: index and field), or could not be read.",
  AGENT_ERR_NO_REFERENCE:
    'The replay agent has no reference trace to play: no --script and no task id / task file were given, or <task file dir>/references/<task id>.json does not exist (details: path).',
  // CLI (vncua run)
  CLI_ERR_BAD_AGENT: 'The --agent module could not be loaded, or its default export is neither an Agent subclass nor a function building an Agent.',
  CLI_ERR_BAD_ARGS: 'A command-line argument is missing, unknown or malformed (e.g. --vnc without --cdp).',
  // The Docker desktop (eval/providers/docker.ts, scripts/setup-docker.sh)
  DOCKER_ERR_NOT_INSTALLED: 'The docker CLI (or dockerd) is not installed: run `npm run setup:docker` (installs docker.io), or use --provider local.',
  DOCKER_ERR_DAEMON: 'No Docker daemon answers (not started, or DOCKER_HOST points nowhere): run `npm run setup:docker`, which starts dockerd and says where its log is.',
  DOCKER_ERR_NO_IMAGE: "The desktop image (vncua-desktop) is missing, or was built from other docker/ files than this checkout's: run `npm run setup:docker`.",
  DOCKER_ERR_BASE_IMAGE:
    'The base image debian:bookworm-slim could neither be pulled nor built from Debian packages with debootstrap (scripts/setup-docker.sh says which step failed).',
  DOCKER_ERR_BUILD_FAILED: '`docker build` of the desktop image failed; scripts/setup-docker.sh prints the end of the build log and where the whole log is.',
  DOCKER_ERR_CONTAINER_EXITED:
    'A desktop container exited, or `docker run` failed, before its desktop was ready; the message holds its last log lines, and the container is removed.',
  // Benchmark runs (eval/)
  EVAL_ERR_BAD_TASKS: 'A task file could not be read, or has bad entries (details.issues lists one { index, field, problem } per bad entry).',
  EVAL_ERR_BAD_ENDPOINTS: 'The --endpoints file of the remote provider could not be read, or has bad entries (details.issues: index and field).',
  EVAL_ERR_BAD_OPTIONS: 'An eval runner option is invalid (workers, retries, resolutions, shard i/n, a task URL that needs --base-url; details name the field).',
  EVAL_ERR_SUITE_COST_CAP:
    "The suite's model calls reached its cost cap (--max-suite-cost, runSuite's maxSuiteCostUsd): the runs going on ended with status cost_cap before their next model call, and no further run was started (the summary counts them as not started).",
  EVAL_ERR_PROVIDER_UNAVAILABLE: 'The desktop provider cannot work here (docker not installed or its daemon not reachable, no remote endpoint fits).',
  EVAL_ERR_DESKTOP_LOST: 'The desktop died or stopped answering during a task (Chromium crashed, CDP gone): an infra error, retried, never counted against the agent.',
  EVAL_ERR_NO_RUNS: 'vncua score found no task run directories (task.json / result.json / execution.json) under the given directory.',
  EVAL_ERR_STATIC_SERVER:
    'The static server for a task suite could not start: its root is missing or not a directory, listening failed, or the start timed out or was aborted (details: root).',
  EVAL_ERR_NO_TASKS: 'The task file selects no task to run: an --only pattern matches none of its task ids (details: patterns, ids).',
  EVAL_ERR_LAYOUT_MIXED:
    'A task directory holds both a single run (--repeat 1: OUT/<agent>/<W>_<H>/<task id>/) and numbered attempts (--repeat K: <task id>/<n>/); nothing was run: use the --repeat it was run with, or another --out (details: dirs).',
  EVAL_ERR_INVALID_RUNS:
    'vncua score found runs whose trace, result or task.json cannot be read (not JSON, fails the schema, unreadable); they are listed in the scores and excluded from the rates; --allow-invalid accepts them.',
  // The Redis job queue (eval/queue/: vncua eval --queue, vncua worker)
  QUEUE_ERR_BAD_URL:
    'The --queue URL is not redis://[[user]:password@]HOST:PORT[/N] (or rediss://): no host or port, another scheme, a database that is not a number (the message never repeats the password).',
  QUEUE_ERR_UNREACHABLE:
    'Redis at the --queue URL does not answer within a few seconds (refused, no route, not a Redis server): nothing was queued or run; check that redis-server runs there (details: url, reason).',
  QUEUE_ERR_TLS:
    "Redis at a rediss:// --queue URL, or the coordinator's https:// results receiver (--results-tls-cert), presented a certificate this machine does not accept (an untrusted or self-signed CA, an expired certificate, another host name): nothing was queued or run (a worker stops before running anything); trust the CA with NODE_EXTRA_CA_CERTS=FILE (details: url, reason, tlsCode).",
  QUEUE_ERR_AUTH: 'Redis at the --queue URL refused the password (WRONGPASS), or wants one and none was given (NOAUTH): give redis://:PASSWORD@HOST:PORT/N.',
  QUEUE_ERR_VERSION:
    "The queue, or a suite's manifest in it, was written by a vncua with another queue format or version: run the coordinator and every worker from the same vncua version, or use another Redis database (details: format, expected, version).",
  QUEUE_ERR_MISMATCH:
    "A worker's task file or agent module differs from the coordinator's (their sha256 differ): the worker takes no job of that suite and exits; give it the same files (details: what, file, ours, theirs).",
  QUEUE_ERR_SHARD_ENV:
    'vncua worker --shard-from-env: JOB_COMPLETION_INDEX or JOB_COMPLETIONS is missing or not a whole number (index 0 <= i < completions), as a Kubernetes Indexed Job sets them (details: index, completions).',
  QUEUE_ERR_SUITE_COST:
    "vncua eval --queue with --max-suite-cost: the suite cost cap is not shared across queue workers (each worker would count only its own spend); nothing was queued: drop --max-suite-cost (--max-cost, each run's own cap, works with --queue), or run the suite locally.",
  QUEUE_ERR_JOB_FAILED:
    "A queued run's job failed for a reason that is not the run's own (a worker error outside the attempt, a commit that failed) after its attempts: counted as an infra error in the progress; the run is left unfinished, and the same command runs it again.",
  // HTML step report (recorder/report)
  REPORT_ERR_NOT_FOUND: 'No action_screenshots.json exists in the run directory given to the step report (run `vncua process` first).',
  REPORT_ERR_INVALID: 'action_screenshots.json is not valid JSON or does not match its schema (details name the field of the first bad part).',
  REPORT_ERR_WRITE: 'action_screenshots.html could not be written (directory missing, not writable, or disk full).',
  REPORT_ERR_ABORTED: 'Writing the step report was cancelled through its AbortSignal or its timeoutMs elapsed.',
  // Session video (recorder/video)
  VIDEO_ERR_BAD_ARGUMENT: 'A writeVideo option or frame is invalid (size out of range, an RGB buffer of the wrong length, fps not positive).',
  VIDEO_ERR_FFMPEG_FAILED: 'ffmpeg exited with an error while encoding the video (the message holds the end of its stderr).',
  VIDEO_ERR_ABORTED: 'Writing the video was cancelled through its AbortSignal (ffmpeg was killed and the partial file removed).',
  VIDEO_ERR_TIMEOUT: 'Writing the video took longer than its timeoutMs (ffmpeg was killed and the partial file removed).',
  // Recording proxy (recorder/proxy)
  RECORDER_ERR_BAD_UPSTREAM: 'The upstream VNC URL given to the recording proxy is not ws://, wss:// or tcp://host:port.',
  RECORDER_ERR_DIR: 'The recording directory could not be created, or is not writable (details: dir).',
  RECORDER_ERR_UPSTREAM_CONNECT:
    'The recording proxy could not connect a client to the upstream VNC endpoint (refused, unreachable, timed out, TLS or WebSocket upgrade failure); that client connection was closed.',
  RECORDER_ERR_WRITE: 'A recording file could not be written while relaying (disk full, directory removed); relaying went on without recording.',
  RECORDER_ERR_TIMEOUT: 'Starting the recording proxy did not finish within its timeout (nothing was left listening).',
  RECORDER_ERR_ABORTED: 'Starting the recording proxy was cancelled through its AbortSignal (nothing was left listening).',
  RECORDER_ERR_BAD_ARGUMENT: 'A recording proxy option is out of range (timeoutMs, connectTimeoutMs).',
  // Replaying recordings and post-processing runs (recorder/replay, recorder/process, vncua process)
  RECORDING_ERR_NOT_FOUND: 'No recording at the given path: the directory does not exist or holds no client/server stream files (*.rfb.bin, *.time.bin).',
  RECORDING_ERR_MISSING_FILE: 'A file of a recorded connection is missing (e.g. server.time.bin without server.rfb.bin); that stream is used as far as the files present allow.',
  RECORDING_ERR_TRUNCATED:
    'A recording file ends early (a partial last time record, a time record pointing past the data, or data with no time record); everything before the damage is used.',
  RECORDING_ERR_TIME_ORDER:
    'A time index goes backwards (a timestamp or cumulative length smaller than the one before) or holds a timestamp that is no time (NaN, infinite or negative); the records before it are used.',
  RECORDING_ERR_BAD_MANIFEST: 'recording.json is not valid JSON or not a vncua recording manifest; the stream files are read without it.',
  RECORDING_ERR_PIXEL_FORMAT:
    "The recorded client used a pixel format other than vncua's (32 bpp, depth 24, little-endian true colour, red/green/blue shifts 0/8/16); that connection cannot be replayed.",
  RECORDING_ERR_DECODE:
    'The recorded server stream cannot be replayed past some point (corrupt data, an encoding or security type this client does not decode); frames up to that point are used (details: connection, offset, time, cause).',
  RECORDING_ERR_CLIENT_STREAM: 'The recorded client stream holds a message that cannot be parsed; client events (pointer, keys) after it are unknown.',
  RECORDING_ERR_NOT_REACHED: "An action lies before the recording's first complete frame: that image is null.",
  RECORDING_ERR_STALE_FRAME:
    'An image shows an older screen than its instant (the recording is damaged or cannot be replayed past that point, or its data ends before): it is marked stale in action_screenshots.json, with the reason and the instant it shows.',
  PROCESS_ERR_WRITE: 'A post-processing output (action_screenshots/, action_screenshots.json) could not be written (directory not writable, disk full).',
  PROCESS_ERR_NO_RUNS: 'vncua process found no run directory (execution.json or partial_execution.json beside a recording/ directory) under the given root.',
  PROCESS_ERR_WORKER: 'A post-processing worker process died or answered garbage while processing a run (the run is reported failed; the others go on).',
  PROCESS_ERR_ALIGNMENT: 'A uitask trace (no timestamps) could not be aligned to the recorded client input; its actions have no images.',
  // The trace viewer (vncua serve, viewer/)
  SERVE_ERR_ROOT: 'The ROOT given to vncua serve does not exist or is not a directory (details: root).',
  SERVE_ERR_NO_RUNS:
    'ROOT holds no run (no directory with task.json, result.json or a trace): vncua serve keeps serving and its page says so; give the --out directory of vncua eval.',
  SERVE_ERR_PORT_IN_USE:
    'The port given to vncua serve (--port) is already in use on that address: choose another, or leave --port out for an OS-chosen one (details: host, port).',
  SERVE_ERR_LISTEN: 'vncua serve could not listen (an address not on this machine, no permission for the port, or the start timed out; details: host, port).',
  SERVE_ERR_RUN_NOT_FOUND: 'The viewer was asked for a run that is not under ROOT (a stale or mistyped link): the page lists the runs there.',
  SERVE_ERR_NOT_LIVE:
    "The run asked for live is not live: its directory holds no live.json (it has ended, or never announced a live endpoint), or the process that wrote live.json is gone (a stale live.json from a crashed runner, left on disk as it is); the page shows the run's recorded trace.",
  SERVE_ERR_LIVE_UNREACHABLE:
    "The run's live.json names a live endpoint that does not answer (the run has just ended, or its runner crashed or hangs): the page says so and keeps the steps so far; vncua serve prints it once per run on stderr.",
  SERVE_ERR_CROSS_ORIGIN:
    "A live view's socket or takeover request came from another site's page (its Origin is not the viewer's), or named a Host that is not a loopback name on a viewer without a token (DNS rebinding): refused (HTTP 403).",
  SERVE_ERR_BAD_REQUEST:
    'A viewer API request lacked a parameter or gave a bad one (e.g. api/frame without t, api/compare without a and b, api/live/control without op or a valid who; HTTP 400): the message says which.',
  SERVE_ERR_COMPARE_MISMATCH:
    'The viewer was asked to compare two runs of different tasks (api/compare, ?compare=A&with=B; HTTP 400): a comparison aligns the steps of one task; pick two runs with the same task id.',
  SERVE_ERR_NO_RECORDING: 'The run has no recording/ (recorded with record: false, or never started): the viewer shows its steps without frames.',
  SERVE_ERR_RECORDING_DAMAGED:
    "The run's recording is damaged or truncated, or cannot be replayed past some point: the viewer shows the frames before the damage and the instant it starts (details: until, reason, warnings).",
  SERVE_ERR_FORBIDDEN: 'A request to a vncua serve bound with --host lacked the token its URL carries (HTTP 403): use the printed URL.',
  // A run's live endpoint (harness/live/): watchers, status, takeover
  LIVE_ERR_TOKEN: "A request to a run's live endpoint lacked its token or gave a wrong one (HTTP 403): take the url and token from the run's live.json.",
  LIVE_ERR_BAD_REQUEST:
    'A request to a live endpoint was malformed: an unknown path (404) or method (405), a missing or bad who, a plain GET of a WebSocket path (426), or a /control body that is not {"op":"takeover"|"handback"|"status","who":NAME} (400).',
  LIVE_ERR_TAKEN: 'Another person holds mouse and keyboard of this run (a takeover): wait until they hand back (HTTP 409; holder says who).',
  LIVE_ERR_NOT_HOLDER: 'A hand-back by someone who does not hold control of the run (HTTP 409).',
  LIVE_ERR_PIXEL_FORMAT:
    'A watcher asked for a pixel format the live endpoint does not serve (it serves 32 bits per pixel true colour, any shifts and byte order): that watcher is closed, the others go on.',
  LIVE_ERR_PROTOCOL:
    "A watcher's bytes are not what an RFB client sends (not a ProtocolVersion, a version before 3.3, a security type other than None, an unknown message): that watcher is closed.",
  LIVE_ERR_NO_FRAMEBUFFER:
    "The run had no VNC connection (so no picture) within the wait for a watcher's ServerInit: the watcher is closed; connect again once the run's desktop is up.",
  LIVE_ERR_RESIZE: 'The desktop size changed and the watcher did not list the DesktopSize pseudo-encoding (-223), so it cannot follow: it is closed; connect again.',
  LIVE_ERR_CLOSED: 'The live endpoint closed (the run ended or its endpoint was stopped): its watchers and event streams are closed with this reason.',
  LIVE_ERR_LISTEN: 'The live endpoint could not listen on 127.0.0.1 (details: cause).',
  LIVE_ERR_TIMEOUT: 'The live endpoint did not start (listen and write live.json) within its timeoutMs.',
  LIVE_ERR_ABORTED: "The live endpoint's start was aborted through its AbortSignal; nothing is left listening and no live.json is left behind.",
  LIVE_ERR_ILLEGAL_STATE: "Internal: a watcher's RFB session was asked for a state change its table does not allow; please report it.",
  // vncua export (eval/export.ts)
  EXPORT_ERR_NO_RUNS:
    'vncua export found no run under ROOT (task.json / result.json / execution.json), ROOT cannot be read, or no run passes the filters (--successful, --agent, --group, --resolution); nothing was written.',
  EXPORT_ERR_OUT_EXISTS: "vncua export's --out directory exists and is not empty, or --out FILE (or its images directory) exists; nothing was written: give a new path.",
  EXPORT_ERR_OUT_IN_ROOT: "vncua export's --out lies inside ROOT, which the export never modifies; give a path outside it.",
  EXPORT_ERR_RUN_SKIPPED:
    'A run under ROOT was not exported: its trace, result.json or task.json cannot be read (damaged), or it ended in an infra error; listed with the reason in export.json and on stderr (exit code 1; the other runs are written).',
  EXPORT_ERR_WRITE: 'An export output (the JSONL, a PNG, export.json) could not be written (directory not writable, disk full).',
  // The job queue's results upload (eval/queue/upload/): workers that do not see the results root
  QUEUE_ERR_RESULTS_UNWRITABLE:
    "The suite's results root cannot be written by this process (a file in the way, permissions, a read-only or pseudo filesystem; details: out, cause): give an --out this machine can write. For a queue worker: the results root the manifest names is not visible here (no marker file of that suite) or not writable, and the coordinator offers no upload; the worker takes no job of that suite and exits (details: out, reason).",
  QUEUE_ERR_UPLOAD:
    "A finished run could not be uploaded to the coordinator's results receiver (wrong token: HTTP 401; receiver unreachable; a file that kept failing its size or sha256 check after the retries; the receiver's disk full; cancelled); the message says which file and step, the run's staging dir is kept (details: url, status, receiverCode, file).",
  QUEUE_ERR_ALREADY_FINISHED:
    "The run's directory in the results root already holds a finished run (result.json of a finished run), so the attempt was not committed over it (an upload: HTTP 409; a shared filesystem: the rename refused): another attempt of the same job finished first (e.g. after a stall); the attempt is dropped, nothing there was touched.",
  QUEUE_ERR_BAD_PATH:
    'A path given to the results receiver is refused (HTTP 400): absolute, with an empty, `.` or `..` segment, a control character or backslash, a run directory starting with `.` (scoring ignores those), or one that leaves the results root through a symlink (details: path, why).',
  QUEUE_ERR_LISTEN:
    'The results receiver could not start: its token is shorter than 16 characters, it could not listen on the given host and port, or the --results-tls-cert / --results-tls-key files cannot be read or do not make a certificate and its key (details: host, port, cause; flag, file).',
  // Model adapters (byom/): model API calls and what the model asks for
  AGENT_ERR_SAFETY_CHECK:
    'A model adapter ended the run because the model raised safety checks that its acknowledge policy does not cover (status sensitive_action, safety_check before it existed; the message lists each check: id, code, message).',
  MODEL_ERR_AUTH:
    'The model API rejected the credentials (HTTP 401 or 403): set the API key (e.g. OPENAI_API_KEY) or fix its permissions (a configuration error: vncua eval stops the suite).',
  MODEL_ERR_RATE_LIMITED: "The model API still answered 429 (rate limit or quota) after the client's retries.",
  MODEL_ERR_SERVER: "The model API still answered 5xx after the client's retries.",
  MODEL_ERR_TIMEOUT: "A model API call got no answer within its request timeout (after the client's retries).",
  MODEL_ERR_CONNECT: "The model API could not be reached (connection refused or reset, DNS, TLS) after the client's retries.",
  MODEL_ERR_REQUEST: "The model API rejected the request (HTTP 4xx other than 401, 403, 404, 429: unsupported parameter, a request too large); the message holds the API's own.",
  MODEL_ERR_NOT_FOUND: 'The model API answered 404: the model name is unknown, or the base URL / endpoint path is wrong (a configuration error: vncua eval stops the suite).',
  MODEL_ERR_BAD_RESPONSE:
    'The model API answered with a body that is not what its wire format says (not JSON, no output list, a tool call without its id); details say what was wrong.',
  MODEL_ERR_UNKNOWN_ACTION: "The model asked for an action the adapter cannot map to vncua's primitives (an unknown action type, or one missing its coordinates; details: action).",
  AGENT_ERR_PARSE:
    "A model adapter could not turn the model's reply into an action, also after re-asking with the validation error (status parse_error; the message holds the last error and the start of the last reply).",
  MODEL_ERR_REFUSAL:
    'The model declined to continue (Anthropic stop_reason "refusal", an OpenAI refusal content part or chat message.refusal); the run ended with status sensitive_action (safety_check before it existed; the message and result.json\'s reason hold the refusal text, and for Anthropic its category and explanation when given).',
  MODEL_ERR_MAX_TOKENS:
    'The model\'s reply was cut off at its output token limit (stop_reason "max_tokens"), so its last action may be incomplete; raise the adapter\'s maxTokens option.',
  MODEL_ERR_CONTEXT_WINDOW:
    'The conversation no longer fits the model\'s context window (stop_reason "model_context_window_exceeded"); keep fewer screenshots (historyScreens) or use fewer steps.',
  // Navigation guard (harness/guard: allowedDomains / blockedDomains)
  GUARD_ERR_BAD_PATTERN:
    'An allowedDomains or blockedDomains pattern is malformed (a wildcard not in first place, a path, credentials, a bad port or host); the message names the pattern and shows valid ones (details: list, pattern).',
  GUARD_ERR_NO_CDP: 'allowedDomains or blockedDomains were given but the Agent has no cdpUrl: the guard enforces them in the browser over CDP.',
  GUARD_ERR_LOST: "The navigation guard's CDP connection to the browser dropped during the run; the run was stopped with status error, as its browser was no longer guarded.",
  GUARD_ERR_START: 'The navigation guard could not attach to the browser over CDP (Fetch.enable on the browser target failed or timed out); the run did not start unguarded.',
  // Auth bindings and secrets (harness/secrets): messages name the binding or the secret, never a value
  AUTH_ERR_BAD_BINDING:
    'An auth binding is malformed: unknown type, a missing field, a bad domain pattern or header name (the message names the binding, e.g. auth[0] bearer *.example.com).',
  AUTH_ERR_SECRET_MISSING:
    "An auth binding's …Env field names an environment variable that is set neither in the environment nor in the secrets file (details: binding, field, env).",
  AUTH_ERR_NO_CDP: 'auth bindings were given but the Agent has no cdpUrl: they are applied in the browser over CDP.',
  AUTH_ERR_START: 'The auth bindings could not attach to the browser over CDP (Fetch.enable on the browser target failed or timed out); the run did not start.',
  AUTH_ERR_TOKEN_URL:
    "An OAuth binding's token URL failed: unreachable, an HTTP error status, or an answer without access_token (details: binding, tokenUrl's origin, status); the run ends with status error.",
  AUTH_ERR_CALLBACK: "A custom auth binding's apply callback threw, or a binding could not be applied to a request (details: binding).",
  AUTH_ERR_REJECTED:
    'A page answered 401/403 to a navigation carrying an auth binding, and again after the binding was re-applied once (details: binding, url origin, status); the run ends with status error.',
  SECRET_ERR_INLINE:
    'A task file or config gives a secret value itself (a secrets entry as a string, or a binding field such as token or password); name an environment variable instead.',
  SECRET_ERR_MISSING: 'A secrets entry names an environment variable that is set neither in the environment nor in the secrets file (details: name, env).',
  SECRET_ERR_BAD_NAME: 'A secrets entry has a name other than letters, digits, _, . and -, or is not { "env": "VARIABLE" }.',
  SECRET_ERR_FILE:
    'The secrets file (secretsFile, --secrets-file) could not be read or is malformed: not a JSON object of strings, or a dotenv line that is not NAME=value (the line number is given, never its value). A queue worker whose own copy at the path in the manifest fails so stops before taking a run.',
  SECRET_ERR_UNKNOWN: 'Typed text holds {{secret:NAME}} for a name the run has no secret for (the message lists the known names).',
  // The rate limit of model calls (harness/agent/rate-gate.ts, eval/queue/rate-limit.ts)
  QUEUE_ERR_BAD_RATE_LIMIT:
    'A --rate-limit rule is malformed: it must be N/s, N/min or N/h (N a whole number 1..1000000), optionally :NAME for one model or adapter (60/min, 10/s, 3600/h, 60/min:gpt-5); the message says what was wrong.',
  QUEUE_ERR_RATE_LIMIT_TIMEOUT:
    "A model call waited longer than its timeout for the rate limit (--rate-limit) or a 429's backoff; the call was not made (details: adapter, model, timeoutMs).",
  QUEUE_ERR_RATE_GATE:
    'The Redis rate gate got an error from Redis itself (not a lost connection, which it waits out), or its connection was closed: the model call was not made; an infra error, so the run is retried (details: status, cause).',
  // Judges beside the success sentinel (eval/judges/): verdicts stored in judges.json
  JUDGE_ERR_BAD_SPEC:
    "A judge spec (a task file's `judges`, --judge) is malformed: an unknown type, a missing or bad field (a URL regex that does not compile, a sample fraction outside 0..1); the message names the judge and the field.",
  JUDGE_ERR_BAD_ANSWER:
    "The LLM judge's model answered something that is not the verdict JSON ({ verdict: pass|fail, reason }): the run's verdict for that judge is unknown, never guessed (details: judge, the answer cut short).",
  JUDGE_ERR_MODEL: "The LLM judge's model call failed: HTTP 5xx or 4xx after the retries, a refused connection, a wrong key (details: judge, status); that verdict is unknown.",
  JUDGE_ERR_TIMEOUT: "The LLM judge's model call did not answer within its timeoutMs (after the retries); that verdict is unknown.",
  JUDGE_ERR_NO_KEY: 'The LLM judge found no API key in the environment variable its spec names (apiKeyEnv, default OPENAI_API_KEY); that verdict is unknown and no call was made.',
  JUDGE_ERR_NEEDS_PAGE:
    'A page judge (expression, selector) was asked again by vncua score --judge, but the page is gone and the run holds no verdict of that judge from its end: that verdict is unknown (give the judge to vncua eval).',
  JUDGE_ERR_PAGE: 'A page judge could not read the final page over CDP (no answer, or the expression threw); that verdict is unknown (details: judge).',
  JUDGE_ERR_WRITE: 'judges.json could not be written into the run directory (not writable, disk full).',
  // Explorer (agents/explorer)
  EXPLORER_ERR_MODEL_ANSWER:
    "The explorer's vision model answered something that is not one usable action (no JSON action, an unknown action, coordinates off the screen): the answer is ignored (counted in the summary's model.ignored) and the heuristics go on.",
  EXPLORER_ERR_MODEL_CALL: "The explorer's vision model call failed (HTTP error, refused connection, timeout): logged on one line, counted as ignored, and the heuristics go on.",
  EXPLORER_ERR_PAGE_FROZEN:
    "The explored page did not answer over CDP within its timeout (a main thread in an endless loop): logged on one line; the explorer stops the page's script and reloads it.",
  // The explorer's findings monitor and QA report (agents/explorer/findings/, agents/explorer/report/).
  EXPLORER_ERR_FINDINGS_ATTACH:
    "The explorer's findings monitor could not attach to the browser over CDP when the run started (the /json endpoint or a page's WebSocket did not answer in time); check that the desktop's browser is up.",
  QA_ERR_INVALID:
    'The QA report (qa-report.json) does not match its schema (agents/explorer/report/qa-report.schema.json): a bug in the explorer; details.issues lists the bad fields. Nothing was written.',
  QA_ERR_WRITE: 'A QA report file (qa-report.json, .md or .html) could not be written into the run directory (not writable, disk full; details: path).',
} as const;

/** A stable error code string. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The one error class vncua throws: `code` is stable, `message` says what was wrong and what to do. */
export class VncuaError extends Error {
  /** Stable machine-readable code, see docs/ERRORS.md. */
  readonly code: ErrorCode;
  /** Extra structured context (argument name, allowed values, offsets...). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VncuaError';
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `e` is a VncuaError, optionally with the given code. */
export function isVncuaError(e: unknown, code?: ErrorCode): e is VncuaError {
  return e instanceof VncuaError && (code === undefined || e.code === code);
}

/** `{ code, message }` of anything thrown: a VncuaError's own, else `fallbackCode` with the error's message (its name if empty). */
export function errorInfo(e: unknown, fallbackCode: string): { code: string; message: string } {
  if (isVncuaError(e)) return { code: e.code, message: e.message };
  const message = e instanceof Error ? e.message || e.name : String(e);
  return { code: fallbackCode, message: message || 'unknown error' };
}
