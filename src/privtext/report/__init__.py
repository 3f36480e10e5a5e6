"""Tables, figures and reports: the runs and measures tables, the paper artefacts, the audit and claims
reports."""
