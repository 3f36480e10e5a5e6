"""Hand-written stand-ins for libraries, kept only to cut a job's start-up; each module says which
library it stands in for and which test holds it equal to that library."""
