"""The hygiene pipeline, one module per stage in the order data flows through them."""
