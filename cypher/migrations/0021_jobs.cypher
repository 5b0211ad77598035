// mode: schema
// Jobs of writes that outlived their HTTP request, shared by every server process: one per id,
// dropped by age, and erased with their subject (the (subject_type, subject_id) index every
// erased label has).
CREATE CONSTRAINT job_id IF NOT EXISTS FOR (j:Job) REQUIRE j.id IS UNIQUE;
CREATE INDEX job_created IF NOT EXISTS FOR (j:Job) ON (j.created_at);
CREATE INDEX job_subject IF NOT EXISTS FOR (j:Job) ON (j.subject_type, j.subject_id);
