return { class = "fast" }
