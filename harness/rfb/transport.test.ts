import { describe, expect, it } from 'vitest';
import { parseVncUrl } from './transport.ts';

describe('parseVncUrl', () => {
  it('parses tcp://host:port, including IPv6 literals', () => {
    expect(parseVncUrl('tcp://127.0.0.1:5901')).toEqual({ kind: 'tcp', host: '127.0.0.1', port: 5901, href: 'tcp://127.0.0.1:5901' });
    expect(parseVncUrl('tcp://[::1]:5900/')).toMatchObject({ kind: 'tcp', host: '::1', port: 5900 });
    expect(parseVncUrl(new URL('tcp://localhost:1'))).toMatchObject({ host: 'localhost', port: 1 });
  });

  it('keeps the path and query of ws:// and wss:// URLs and derives the Origin', () => {
    expect(parseVncUrl('ws://127.0.0.1:6080/websockify?token=a')).toEqual({
      kind: 'ws',
      secure: false,
      href: 'ws://127.0.0.1:6080/websockify?token=a',
      host: '127.0.0.1',
      origin: 'http://127.0.0.1:6080',
    });
    expect(parseVncUrl('wss://vnc.example.test/')).toMatchObject({ secure: true, origin: 'https://vnc.example.test' });
  });

  it('refuses everything else with RFB_ERR_BAD_URL', () => {
    for (const bad of ['', 'ws://', 'tcp://host', 'tcp://host:99999', 'tcp://host:5900?x=1', 'http://host:80', 'vnc://host:5900', 'ws://h/#frag']) {
      expect(() => parseVncUrl(bad), bad).toThrow(expect.objectContaining({ code: 'RFB_ERR_BAD_URL' }));
    }
  });
});
