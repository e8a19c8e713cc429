/** Results upload for queue workers that do not see the results root: the coordinator's receiver and the workers' sink. */
export { checkRelPath, QUEUE_DIR, resolveInside } from './paths.ts';
export { newUploadToken, type ResultsReceiver, type ResultsReceiverOptions, startResultsReceiver } from './receiver.ts';
export { type UploadSink, type UploadSinkOptions, uploadSink } from './sink.ts';
