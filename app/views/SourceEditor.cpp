//===- SourceEditor.cpp - The Python source of the open model file --------===//

#include "SourceEditor.h"

#include <QFontDatabase>
#include <QVBoxLayout>

#ifdef CUVIL_HAVE_QSCINTILLA
#include <Qsci/qscilexercpp.h>
#include <Qsci/qscilexerpython.h>
#include <Qsci/qsciscintilla.h>
#else
#include <QPlainTextEdit>
#include <QTextBlock>
#endif

namespace cuvil::workbench {

#ifdef CUVIL_HAVE_QSCINTILLA
namespace {
constexpr int kLinkMarker = 1;
constexpr int kErrorMarker = 2;
} // namespace
#endif

SourceEditor::SourceEditor(QWidget *parent, Language language)
    : QWidget(parent), lang(language) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
#ifdef CUVIL_HAVE_QSCINTILLA
  auto *sci = new QsciScintilla(this);
  sci->setFont(mono);
  editor = sci;
  setLanguage(language);
  sci->setReadOnly(true);
  sci->setMarginType(0, QsciScintilla::NumberMargin);
  sci->setMarginWidth(0, "00000");
  sci->setMarginLineNumbers(0, true);
  sci->setCaretLineVisible(true);
  sci->setCaretLineBackgroundColor(QColor(0xf4, 0xf4, 0xf8));
  sci->markerDefine(QsciScintilla::Background, kLinkMarker);
  sci->setMarkerBackgroundColor(QColor(0xcc, 0xdd, 0xff), kLinkMarker);
  sci->markerDefine(QsciScintilla::Background, kErrorMarker);
  sci->setMarkerBackgroundColor(QColor(0xff, 0xcc, 0xcc), kErrorMarker);
  connect(sci, &QsciScintilla::cursorPositionChanged, this,
          [this](int line, int) {
            if (line + 1 != marked)
              emit lineActivated(line + 1);
          });
#else
  auto *plain = new QPlainTextEdit(this);
  plain->setReadOnly(true);
  plain->setFont(mono);
  connect(plain, &QPlainTextEdit::cursorPositionChanged, this, [this, plain] {
    int line = plain->textCursor().blockNumber() + 1;
    if (line != marked)
      emit lineActivated(line);
  });
  editor = plain;
#endif
  layout->addWidget(editor);
}

void SourceEditor::setLanguage(Language language) {
  lang = language;
#ifdef CUVIL_HAVE_QSCINTILLA
  auto *sci = static_cast<QsciScintilla *>(editor);
  QsciLexer *old = sci->lexer();
  QsciLexer *lexer = nullptr;
  if (language == Language::C)
    lexer = new QsciLexerCPP(sci);
  else if (language == Language::Python)
    lexer = new QsciLexerPython(sci);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  if (lexer) {
    lexer->setDefaultFont(mono);
    for (int style = 0; style < 128; ++style)
      lexer->setFont(mono, style);
  }
  sci->setLexer(lexer);
  if (!lexer)
    sci->setFont(mono);
  delete old;
#endif
}

void SourceEditor::setSource(const QString &text) {
  marked = 0;
#ifdef CUVIL_HAVE_QSCINTILLA
  static_cast<QsciScintilla *>(editor)->setText(text);
#else
  static_cast<QPlainTextEdit *>(editor)->setPlainText(text);
#endif
}

QString SourceEditor::source() const {
#ifdef CUVIL_HAVE_QSCINTILLA
  return static_cast<QsciScintilla *>(editor)->text();
#else
  return static_cast<QPlainTextEdit *>(editor)->toPlainText();
#endif
}

void SourceEditor::markLine(int line, bool error) {
  marked = line;
#ifdef CUVIL_HAVE_QSCINTILLA
  auto *sci = static_cast<QsciScintilla *>(editor);
  sci->markerDeleteAll(kLinkMarker);
  if (!error)
    sci->markerDeleteAll(kErrorMarker);
  if (line <= 0)
    return;
  sci->markerAdd(line - 1, error ? kErrorMarker : kLinkMarker);
  sci->ensureLineVisible(line - 1);
  sci->setCursorPosition(line - 1, 0);
#else
  auto *plain = static_cast<QPlainTextEdit *>(editor);
  QList<QTextEdit::ExtraSelection> selections;
  if (line > 0) {
    QTextEdit::ExtraSelection sel;
    sel.format.setBackground(error ? QColor(0xff, 0xcc, 0xcc)
                                   : QColor(0xcc, 0xdd, 0xff));
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    sel.cursor = QTextCursor(plain->document()->findBlockByNumber(line - 1));
    selections << sel;
    plain->setTextCursor(sel.cursor);
    plain->centerCursor();
  }
  plain->setExtraSelections(selections);
#endif
}

} // namespace cuvil::workbench
