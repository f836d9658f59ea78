"""The judge's questions, one module each: what it sees, which model answers, the prompt, the answer's parser.

Each module holds one ``judge.question.Question`` and the instructions beside
it as ``<module>_prompt.txt``; the file names are the list. docs/judge.md
("A question, in one module") shows how to add one.
"""
