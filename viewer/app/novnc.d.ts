/** The part of noVNC's RFB (`@novnc/novnc` 1.7, core/rfb.js; docs/API.md) the live view uses: the package ships no types. */
declare module '@novnc/novnc' {
  /** One connection to an RFB server over a WebSocket, drawn in a canvas it adds to `target`. */
  export default class RFB extends EventTarget {
    constructor(target: HTMLElement, urlOrChannel: string | WebSocket, options?: { shared?: boolean; wsProtocols?: string[]; credentials?: { password?: string } });
    viewOnly: boolean;
    scaleViewport: boolean;
    clipViewport: boolean;
    resizeSession: boolean;
    focusOnClick: boolean;
    showDotCursor: boolean;
    background: string;
    qualityLevel: number;
    compressionLevel: number;
    disconnect(): void;
    focus(options?: FocusOptions): void;
    blur(): void;
    getImageData(): ImageData;
  }
}
