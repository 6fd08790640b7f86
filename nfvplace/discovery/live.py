def discover_live(**kw): raise NotImplementedError
