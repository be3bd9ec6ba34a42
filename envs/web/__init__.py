"""The web world: a small shop-admin website served on loopback, driven by Chromium through Playwright.

Modules: `site` (Flask app + state), `server` (loopback-only server thread), `tasks` (objectives with
programmatic success checks), `actions` (WebArena action syntax), `accessibility` (WebArena-style tree
text), `tree` (item changes between trees), `spaces` (a Unicode text space), `driver` (Playwright),
`browser_env` (Gymnasium env over the real browser), `world_model_env` (the learned simulator),
`collect` (transition data).
"""
