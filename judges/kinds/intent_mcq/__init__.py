"""IntentGrasp multiple choice: its evaluation prompts (DA, CoT, IA) and its random-guess baseline."""
