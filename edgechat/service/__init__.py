"""The engine as a service, with no Qt: what the window talks to.

    protocol.py      every command (window -> engine) and event (engine -> window), typed
    host.py          EngineService (three threads around one Engine) and the engine process's entry point
    index_runner.py  index / refresh / remove jobs, queued and coalesced, reported as events
    answer_runner.py answers for numbered requests, streamed as events; the chat client by Engine's rule
    eta.py           time left while indexing
"""
