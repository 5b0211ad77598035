// mode: read
// params: scope, subject_type, subject_id, label
// The scope's blocks (one label, or all), in label order.
MATCH (b:Block) WHERE b.subject_type = $subject_type AND b.subject_id = $subject_id AND b.scope = $scope AND ($label IS NULL OR b.label = $label)
RETURN b {.*} AS block ORDER BY b.label
