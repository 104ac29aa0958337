#pragma once
// The temperature control's scale, shared by the control panel's slider and presenter mode's keys: equal
// steps multiply the temperature by the same factor, from kSliderMinTemperature to kSliderMaxTemperature,
// so 1.0 sits in the middle.
#include <algorithm>
#include <cmath>

namespace attnscope::temperaturescale {

constexpr int kSliderSteps = 1000;
constexpr double kSliderMinTemperature = 0.05;
constexpr double kSliderMaxTemperature = 20.0;

inline double temperatureForSlider(int position)
{
    const double f = std::clamp(position, 0, kSliderSteps) / double(kSliderSteps);
    return kSliderMinTemperature * std::pow(kSliderMaxTemperature / kSliderMinTemperature, f);
}

inline int sliderForTemperature(double temperature)
{
    const double t = std::clamp(temperature, kSliderMinTemperature, kSliderMaxTemperature);
    const double f = std::log(t / kSliderMinTemperature) / std::log(kSliderMaxTemperature / kSliderMinTemperature);
    return int(std::lround(f * kSliderSteps));
}

} // namespace attnscope::temperaturescale
