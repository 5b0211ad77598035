// mode: write
// params: props
// Hold a candidate for human review (resident targets such as procedural rules).
CREATE (r:Review) SET r = $props
RETURN r.id AS id
