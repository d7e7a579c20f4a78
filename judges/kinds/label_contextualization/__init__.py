"""IntentGrasp label contextualization: its statement prompt and its plain-draft baseline."""
