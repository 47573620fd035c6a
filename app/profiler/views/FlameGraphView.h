//===- FlameGraphView.h - Paints a flame graph or icicle --------*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_FLAMEGRAPHVIEW_H
#define CUVIL_WORKBENCH_FLAMEGRAPHVIEW_H

#include "FlameGraph.h"

#include <QWidget>

namespace cuvil::workbench {

class FlameGraphModel;

/// Draws the FlameTree of a FlameGraphModel: a flame graph (root at the
/// bottom) or an icicle (root on top). Frames are coloured by source
/// module, or red (slower) / blue (faster) in diff mode; with a search,
/// matches keep their colour and the rest fade. Clicking a frame zooms into
/// it, clicking the root or a frame above the zoomed one zooms back out;
/// Escape resets the zoom. Geometry comes from layoutFlame().
class FlameGraphView : public QWidget {
  Q_OBJECT
public:
  enum class Orientation { Flame, Icicle };
  static constexpr int kRowHeight = 18;
  static constexpr uint32_t kNoFrame = UINT32_MAX;

  explicit FlameGraphView(QWidget *parent = nullptr);

  void setModel(FlameGraphModel *model);
  FlameGraphModel *model() const { return source; }

  /// What an empty view says ("No profile loaded").
  void setEmptyText(const QString &text);

  void setOrientation(Orientation orientation);
  Orientation orientation() const { return direction; }

  /// Zooms into frame `node` (0: the whole tree).
  void zoomTo(uint32_t node);
  uint32_t zoomedNode() const { return zoom; }
  void resetZoom() { zoomTo(0); }

  /// The frame drawn at `pos`, or kNoFrame.
  uint32_t frameAt(const QPoint &pos) const;
  /// Where frame `node` is drawn now; empty when it is not drawn.
  QRectF frameRect(uint32_t node) const;
  /// The fill colour of frame `node` in the current mode and search.
  QColor frameColor(uint32_t node) const;
  /// The frame under the mouse, or kNoFrame.
  uint32_t hoveredFrame() const { return hovered; }
  /// Frames drawn now (after level-of-detail pruning).
  size_t drawnFrameCount() const { return rects.size(); }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

signals:
  /// A frame was clicked (after the view zoomed into it).
  void frameClicked(quint32 node);
  void zoomChanged(quint32 node);

protected:
  void paintEvent(QPaintEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void mouseMoveEvent(QMouseEvent *event) override;
  void leaveEvent(QEvent *event) override;
  void keyPressEvent(QKeyEvent *event) override;
  bool event(QEvent *event) override;

private:
  void relayout();
  void treeChanged();
  QRectF rectOf(const FlameRect &r) const;
  int contentHeight() const;

  FlameGraphModel *source = nullptr;
  Orientation direction = Orientation::Flame;
  uint32_t zoom = 0;
  std::vector<FlameRect> rects;
  QString emptyText = "No profile loaded";
  uint32_t hovered = kNoFrame;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_FLAMEGRAPHVIEW_H
