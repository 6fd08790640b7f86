"""Alembic environment: runs on the connection handed over by `nfvplace.store.db.migrate`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from nfvplace.store.tables import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as own:
        context.configure(connection=own, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()


run()
