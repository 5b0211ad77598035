// mode: write
// params: ids, scope
// The episodes a commit decides are no longer Undecided (store/put_episodes).
UNWIND $ids AS id
MATCH (e:Episode {scope: $scope, id: id}) WHERE e:Undecided
REMOVE e:Undecided, e.place
