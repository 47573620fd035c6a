//===- SourceEditor.h - The Python source of the open model file -*- C++
//-*-===//
#ifndef CUVIL_WORKBENCH_SOURCEEDITOR_H
#define CUVIL_WORKBENCH_SOURCEEDITOR_H

#include <QWidget>

namespace cuvil::workbench {

/// Read-only Python source view with a marked line: QScintilla with its
/// Python lexer when available, otherwise a plain text view.
class SourceEditor : public QWidget {
  Q_OBJECT
public:
  /// What the editor shows, for its highlighting: the user's Python, the C
  /// a target generated, or WebAssembly text (shown plain).
  /// Wat and PTX are shown as plain text.
  enum class Language { Python, C, Wat, PTX };

  explicit SourceEditor(QWidget *parent = nullptr,
                        Language language = Language::Python);
  Language language() const { return lang; }
  /// Highlights the text as `language` from now on.
  void setLanguage(Language language);

  void setSource(const QString &text);
  QString source() const;
  /// Marks line `line` (1-based) and scrolls to it; 0 clears the mark.
  void markLine(int line, bool error = false);
  int markedLine() const { return marked; }

signals:
  /// The user clicked or moved the cursor to `line` (1-based).
  void lineActivated(int line);

private:
  QWidget *editor = nullptr;
  int marked = 0;
  Language lang;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_SOURCEEDITOR_H
