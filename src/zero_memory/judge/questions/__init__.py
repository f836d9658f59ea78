"""The judge's questions, one module each: what it sees, which model answers, the prompt, the answer's parser.

- ``pair``: how do two memories relate? (hygiene's scan, re-judge, rescan, retro)
- ``portability``: does a project memory hold outside its project? (the gate and the audit)
- ``extraction``: which statements in a transcript chunk are worth keeping? (capture)

Each is a ``judge.question.Question``; docs/judge.md shows how to add one.
"""
