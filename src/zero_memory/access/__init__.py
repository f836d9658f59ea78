"""Who may do what: users and tokens, projects and membership, the visibility predicate."""
