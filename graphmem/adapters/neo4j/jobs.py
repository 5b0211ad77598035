"""``JobStore`` on Neo4j: the jobs of late writes, one node each, the result as JSON text."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from graphmem.adapters.neo4j.driver import Neo4jConnection
from graphmem.adapters.neo4j.rows import native, scope_of, scope_props
from graphmem.domain.models import Job


class Neo4jJobs:
    """``graphmem.ports.JobStore`` on Neo4j (a part of ``Neo4jStore``)."""

    conn: Neo4jConnection

    def put_job(self, job: Job) -> None:
        self.conn.write("jobs/put_job", id=job.id, props=_props(job))

    def end_job(self, job: Job) -> bool:
        return bool(self.conn.write("jobs/end_job", id=job.id, props=_props(job)))

    def get_job(self, job_id: str) -> Job | None:
        rows = self.conn.read("jobs/get_job", id=job_id)
        if not rows:
            return None
        props = native(rows[0]["job"])
        scope = scope_of(props)
        result = props.pop("result", None)
        fields = {k: v for k, v in props.items() if k in Job.model_fields}
        return Job.model_validate({**fields, "scope": scope, "result": None if result is None else json.loads(result)})

    def drop_jobs(self, before: datetime) -> int:
        return int(self.conn.write("jobs/drop_jobs", before=before)[0]["dropped"])


def _props(job: Job) -> dict[str, Any]:
    return {
        **job.model_dump(exclude={"scope", "result"}),
        **scope_props(job.scope),
        "result": None if job.result is None else json.dumps(job.result),
    }
