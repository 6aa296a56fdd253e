"""Model adapters: DeepSeek and OpenAI-compatible over httpx, the demo model, scripted models."""
