"""The words autodiff shows people, below the parser and the interpreter: translation (i18n and
the zh_CN catalog), the diagnostic's form (file:line:col, source line, caret), and terminal
display widths for CJK text.
"""
