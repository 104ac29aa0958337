#pragma once
// Keeps hidden views from recomputing on every keystroke: request() refreshes the view now when it can be
// seen, or when it is not in any shown window at all (tests, headless rendering); a view hidden behind
// another tab of a shown window, or behind the sentence of a NoAttentionPage, is refreshed the next time it is
// shown.
#include <QObject>
#include <functional>

class QWidget;

namespace attnscope {

class RefreshGate : public QObject {
    Q_OBJECT
public:
    RefreshGate(QWidget* view, std::function<void()> refresh);
    void request();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_view;
    std::function<void()> m_refresh;
    bool m_pending = false;
};

} // namespace attnscope
