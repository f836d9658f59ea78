"""The SQL both stores share, one mixin per area; ``store.sql.SqlTx`` combines them."""
