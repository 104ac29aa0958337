#pragma once
#include <QMainWindow>

namespace attnscope {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
};

} // namespace attnscope
