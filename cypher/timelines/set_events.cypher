// mode: write
// params: rows
// Timeline events on decisions written before timelines: rows of {id, event} with the event's
// ev_* properties, times as ISO 8601 text.
UNWIND $rows AS row
MATCH (d:Decision {id: row.id})
SET d += row.event, d.ev_order_at = datetime(row.event.ev_order_at), d.ev_valid_at = datetime(row.event.ev_valid_at),
    d.ev_end = datetime(row.event.ev_end), d.ev_occurred_at = datetime(row.event.ev_occurred_at)
