// stand-in: marks the ggml root
