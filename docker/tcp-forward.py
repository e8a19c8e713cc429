"""Forward TCP connections from LISTEN_HOST:LISTEN_PORT to 127.0.0.1:TARGET_PORT.

Chromium binds its DevTools (CDP) server to 127.0.0.1 only and ignores
--remote-debugging-address outside headless mode, so inside a container start.sh puts this
forwarder on 0.0.0.0 in front of it. LISTEN_PORT may be 0 (the OS picks one).

usage: tcp-forward.py LISTEN_HOST LISTEN_PORT TARGET_PORT
"""
import asyncio
import sys


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until EOF, then half-close the other side."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, target: int) -> None:
    try:
        target_r, target_w = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        client_w.close()
        return
    try:
        await asyncio.gather(pump(client_r, target_w), pump(target_r, client_w))
    finally:
        client_w.close()
        target_w.close()


async def main() -> None:
    host, port, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    server = await asyncio.start_server(lambda r, w: handle(r, w, target), host, port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
