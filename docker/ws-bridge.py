"""websockify, started without numpy.

websockify imports numpy only to unmask client frames faster; a VNC client sends a few
bytes per input event, so numpy buys nothing here and costs ~50 ms and a burst of BLAS
threads at start. Blocking it halves the time until the port is open (~80 ms vs ~140 ms).
Arguments are websockify's own.
"""
import sys
import warnings

sys.modules["numpy"] = None  # makes `import numpy` raise ImportError inside websockify
warnings.simplefilter("ignore")

from websockify.websocketproxy import websockify_init  # noqa: E402

sys.argv[0] = "websockify"
websockify_init()
