"""Facts computed over IR and its types that several layers above use."""
