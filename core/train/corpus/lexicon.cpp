#include "core/train/corpus/lexicon.h"

#include <algorithm>
#include <set>
#include <string>

namespace attnscope::train {

namespace {

// The lists are kept as text, one entry per line with its fields separated by spaces, so that adding a
// word is adding a line. The views returned point into these literals, which live for the program.

// singular plural sound[,sound...]
constexpr std::string_view kAnimals = R"(
dog dogs barked,growled
cat cats purred,meowed
cow cows mooed
horse horses neighed
sheep sheep bleated
goat goats bleated
pig pigs grunted
duck ducks quacked
hen hens clucked
rooster roosters crowed
bird birds sang,chirped
owl owls hooted
wolf wolves howled
lion lions roared
tiger tigers roared
bear bears growled
snake snakes hissed
frog frogs croaked
mouse mice squeaked
bee bees buzzed
donkey donkeys brayed
monkey monkeys chattered
elephant elephants trumpeted
parrot parrots squawked
dove doves cooed
crow crows cawed
goose geese honked
turkey turkeys gobbled
puppy puppies yelped,barked
kitten kittens mewed,purred
fox foxes yelped
rabbit rabbits thumped
squirrel squirrels chattered
hamster hamsters squeaked
lamb lambs bleated
calf calves mooed
pony ponies neighed
cricket crickets chirped
pigeon pigeons cooed
seagull seagulls screeched
hyena hyenas laughed
gorilla gorillas grunted
camel camels groaned
whale whales sang
dolphin dolphins clicked
coyote coyotes howled
raven ravens cawed
canary canaries sang
beetle beetles clicked
cicada cicadas buzzed
magpie magpies chattered
peacock peacocks screamed
swan swans hissed
chicken chickens clucked
cuckoo cuckoos called
lark larks sang
nightingale nightingales sang
bull bulls snorted
ox oxen lowed
mule mules brayed
wren wrens trilled
toad toads croaked
rat rats squeaked
bat bats squeaked
moose moose bellowed
)";

// singular plural m|f
constexpr std::string_view kPeople = R"(
man men m
woman women f
boy boys m
girl girls f
king kings m
queen queens f
father fathers m
mother mothers f
brother brothers m
sister sisters f
uncle uncles m
aunt aunts f
son sons m
daughter daughters f
husband husbands m
wife wives f
prince princes m
princess princesses f
grandfather grandfathers m
grandmother grandmothers f
gentleman gentlemen m
lady ladies f
nephew nephews m
niece nieces f
waiter waiters m
waitress waitresses f
actor actors m
actress actresses f
monk monks m
nun nuns f
)";

// People named by their work, who appear in sentences without pronouns: singular plural
constexpr std::string_view kWorkers = R"(
teacher teachers
doctor doctors
nurse nurses
farmer farmers
baker bakers
butcher butchers
cook cooks
chef chefs
driver drivers
pilot pilots
sailor sailors
soldier soldiers
painter painters
writer writers
singer singers
dancer dancers
student students
child children
baby babies
friend friends
neighbor neighbors
stranger strangers
guard guards
clerk clerks
judge judges
lawyer lawyers
banker bankers
tailor tailors
carpenter carpenters
plumber plumbers
gardener gardeners
hunter hunters
fisher fishers
miner miners
poet poets
artist artists
scientist scientists
engineer engineers
pupil pupils
visitor visitors
tourist tourists
shepherd shepherds
merchant merchants
mayor mayors
)";

constexpr std::string_view kMaleNames = R"(
tom ben sam jack leo max oscar harry james john david peter paul mark luke adam noah liam ethan owen
henry george arthur oliver lucas daniel michael robert william thomas edward frank hugo felix victor
simon martin carl eric ivan omar ali hassan ravi arjun kenji hiro chen wei pablo diego carlos marco
luca pierre andre hans otto lars sven erik nils igor boris aaron bruno colin dennis edgar fred gavin harold isaac jonah
kevin lewis milo neil patrick quentin rufus stefan toby ulrich vincent walter xavier yusuf zack)";

constexpr std::string_view kFemaleNames = R"(
anna emma mia lily sara sophie grace alice ruth jane mary lucy kate helen rose julia laura nora olivia
ella chloe zoe amy eva ivy claire diana irene maria elena sofia isabel carmen lucia paula rita tina
nina vera olga katya yuki mei lin priya asha fatima leila hana ines marta greta freya ingrid astrid
heidi elsa clara agnes beth carol dora edith fiona gemma hazel iris june kira lena molly nadia
opal petra queenie rachel stella tara ursula violet wendy xena yara zara)";

// singular plural
constexpr std::string_view kSurfaces = R"(
mat mats
rug rugs
bed beds
sofa sofas
couch couches
chair chairs
bench benches
floor floors
carpet carpets
blanket blankets
pillow pillows
cushion cushions
step steps
stool stools
box boxes
log logs
rock rocks
stone stones
fence fences
shelf shelves
desk desks
porch porches
roof roofs
towel towels
coat coats
newspaper newspapers
sweater sweaters
basket baskets
wall walls
boat boats
table tables
bridge bridges
hill hills
branch branches
crate crates
barrel barrels
sack sacks
quilt quilts
doormat doormats
windowsill windowsills
)";

constexpr std::string_view kThings = R"(
book books
car cars
key keys
letter letters
pen pens
pencil pencils
cup cups
plate plates
bowl bowls
spoon spoons
fork forks
knife knives
bottle bottles
bag bags
hat hats
shoe shoes
sock socks
shirt shirts
dress dresses
ring rings
watch watches
clock clocks
lamp lamps
phone phones
camera cameras
radio radios
computer computers
ball balls
kite kites
toy toys
doll dolls
drum drums
guitar guitars
piano pianos
violin violins
map maps
ticket tickets
picture pictures
painting paintings
photo photos
bicycle bicycles
bike bikes
truck trucks
bus buses
train trains
ship ships
plane planes
umbrella umbrellas
candle candles
mirror mirrors
window windows
door doors
gift gifts
card cards
note notes
flower flowers
tree trees
leaf leaves
seed seeds
coin coins
wallet wallets
purse purses
jacket jackets
scarf scarves
glove gloves
boot boots
belt belts
button buttons
brush brushes
comb combs
soap soaps
bucket buckets
hammer hammers
nail nails
rope ropes
chain chains
wheel wheels
engine engines
tool tools
ladder ladders
tent tents
flag flags
poster posters
magazine magazines
novel novels
poem poems
song songs
story stories
game games
puzzle puzzles
present presents
package packages
parcel parcels
envelope envelopes
stamp stamps
jar jars
pot pots
pan pans
kettle kettles
teapot teapots
vase vases
statue statues
sword swords
shield shields
crown crowns
necklace necklaces
bracelet bracelets
lantern lanterns
compass compasses
telescope telescopes
microscope microscopes
notebook notebooks
diary diaries
album albums
helmet helmets
backpack backpacks
cupboard cupboards
drawer drawers
toothbrush toothbrushes
pillowcase pillowcases
curtain curtains
carpetbag carpetbags
cart carts
wagon wagons
sled sleds
skate skates
racket rackets
paddle paddles
oar oars
net nets
fan fans
heater heaters
fridge fridges
oven ovens
stove stoves
sink sinks
bathtub bathtubs
shower showers
faucet faucets
pipe pipes
wire wires
battery batteries
bulb bulbs
switch switches
plug plugs
screen screens
keyboard keyboards
printer printers
folder folders
file files
page pages
chapter chapters
label labels
sign signs
badge badges
medal medals
trophy trophies
prize prizes
pebble pebbles
shell shells
feather feathers
bone bones
stick sticks
twig twigs
brick bricks
tile tiles
plank planks
board boards
jug jugs
mug mugs
glass glasses
tray trays
napkin napkins
apron aprons
mitten mittens
slipper slippers
sandal sandals
cap caps
hood hoods
cloak cloaks
robe robes
uniform uniforms
costume costumes
mask masks
whistle whistles
bell bells
horn horns
flute flutes
trumpet trumpets
harp harps
banjo banjos
suitcase suitcases
)";

constexpr std::string_view kPlaces = R"(
river rivers
bank banks
park parks
house houses
garden gardens
forest forests
field fields
farm farms
barn barns
school schools
library libraries
market markets
shop shops
store stores
kitchen kitchens
room rooms
hall halls
street streets
road roads
city cities
town towns
village villages
lake lakes
sea seas
beach beaches
mountain mountains
valley valleys
castle castles
church churches
station stations
airport airports
harbor harbors
island islands
desert deserts
jungle jungles
cave caves
office offices
hospital hospitals
museum museums
theater theaters
cafe cafes
restaurant restaurants
hotel hotels
zoo zoos
pond ponds
meadow meadows
orchard orchards
yard yards
attic attics
cellar cellars
tower towers
palace palaces
square squares
bakery bakeries
factory factories
classroom classrooms
playground playgrounds
stable stables
kennel kennels
nest nests
bay bays
cliff cliffs
shore shores
stream streams
waterfall waterfalls
swamp swamps
pasture pastures
vineyard vineyards
cottage cottages
cabin cabins
apartment apartments
bedroom bedrooms
bathroom bathrooms
corridor corridors
staircase staircases
balcony balconies
garage garages
shed sheds
workshop workshops
studio studios
gallery galleries
stadium stadiums
arena arenas
temple temples
mosque mosques
prison prisons
court courts
)";

constexpr std::string_view kFoods = R"(
apple apples
bread breads
cake cakes
cheese cheeses
egg eggs
fish fish
soup soups
rice rices
pie pies
cookie cookies
banana bananas
orange oranges
pear pears
grape grapes
lemon lemons
cherry cherries
peach peaches
plum plums
carrot carrots
potato potatoes
tomato tomatoes
onion onions
bean beans
pea peas
nut nuts
sandwich sandwiches
pizza pizzas
noodle noodles
salad salads
biscuit biscuits
muffin muffins
melon melons
berry berries
strawberry strawberries
mango mangoes
olive olives
pepper peppers
cucumber cucumbers
pumpkin pumpkins
sausage sausages
dumpling dumplings
pancake pancakes
waffle waffles
cracker crackers
donut donuts
bun buns
roll rolls
tart tarts
pudding puddings
candy candies
chocolate chocolates
lolly lollies
walnut walnuts
almond almonds
peanut peanuts
radish radishes
turnip turnips
cabbage cabbages
lettuce lettuces
apricot apricots
coconut coconuts
kiwi kiwis
lime limes
fig figs
date dates
)";

// base third-person past
constexpr std::string_view kTransitive = R"(
bite bites bit
see sees saw
chase chases chased
follow follows followed
find finds found
watch watches watched
help helps helped
call calls called
meet meets met
love loves loved
like likes liked
hate hates hated
push pushes pushed
pull pulls pulled
carry carries carried
hold holds held
catch catches caught
throw throws threw
kick kicks kicked
hit hits hit
touch touches touched
wash washes washed
feed feeds fed
visit visits visited
teach teaches taught
greet greets greeted
hug hugs hugged
kiss kisses kissed
scare scares scared
wake wakes woke
thank thanks thanked
trust trusts trusted
miss misses missed
ignore ignores ignored
admire admires admired
praise praises praised
blame blames blamed
warn warns warned
invite invites invited
remember remembers remembered
forget forgets forgot
answer answers answered
ask asks asked
join joins joined
lead leads led
guide guides guided
save saves saved
rescue rescues rescued
protect protects protected
fight fights fought
beat beats beat
bump bumps bumped
lick licks licked
sniff sniffs sniffed
paint paints painted
draw draws drew
buy buys bought
sell sells sold
read reads read
write writes wrote
open opens opened
close closes closed
fix fixes fixed
break breaks broke
build builds built
clean cleans cleaned
cook cooks cooked
eat eats ate
drink drinks drank
want wants wanted
need needs needed
take takes took
bring brings brought
give gives gave
keep keeps kept
lose loses lost
hide hides hid
show shows showed
send sends sent
drop drops dropped
pick picks picked
fill fills filled
move moves moved
use uses used
borrow borrows borrowed
lend lends lent
steal steals stole
share shares shared
check checks checked
count counts counted
order orders ordered
choose chooses chose
study studies studied
wrap wraps wrapped
unwrap unwraps unwrapped
lift lifts lifted
drag drags dragged
shake shakes shook
stir stirs stirred
pour pours poured
fold folds folded
tear tears tore
sew sews sewed
knit knits knitted
plant plants planted
water waters watered
dig digs dug
bury buries buried
collect collects collected
gather gathers gathered
deliver delivers delivered
polish polishes polished
repair repairs repaired
measure measures measured
weigh weighs weighed
)";

constexpr std::string_view kIntransitive = R"(
run runs ran
walk walks walked
sleep sleeps slept
swim swims swam
jump jumps jumped
sing sings sang
dance dances danced
laugh laughs laughed
cry cries cried
smile smiles smiled
shout shouts shouted
whisper whispers whispered
wait waits waited
rest rests rested
play plays played
work works worked
travel travels traveled
arrive arrives arrived
leave leaves left
return returns returned
fall falls fell
climb climbs climbed
fly flies flew
hurry hurries hurried
wander wanders wandered
sit sits sat
stand stands stood
listen listens listened
think thinks thought
dream dreams dreamed
shiver shivers shivered
sneeze sneezes sneezed
cough coughs coughed
yawn yawns yawned
blink blinks blinked
nod nods nodded
wave waves waved
win wins won
grow grows grew
shine shines shone
hum hums hummed
giggle giggles giggled
frown frowns frowned
blush blushes blushed
stumble stumbles stumbled
tumble tumbles tumbled
skip skips skipped
hop hops hopped
crawl crawls crawled
float floats floated
drift drifts drifted
glow glows glowed
sparkle sparkles sparkled
melt melts melted
freeze freezes froze
)";

constexpr std::string_view kPostures = "sat slept lay rested napped waited stood sprawled curled perched";

constexpr std::string_view kAdjectives = R"(
red blue green yellow black white brown grey pink purple orange golden silver dark bright pale
big small large tiny huge little tall short long wide narrow heavy light thick thin round square flat
old new young ancient modern fresh clean dirty wet dry soft hard smooth rough warm hot cold cool
shiny dull quiet loud noisy calm wild gentle fierce friendly lazy busy clever silly brave shy proud
beautiful ugly pretty plain strange odd famous rare common cheap expensive rich poor empty full broken
lucky sweet sour bitter salty spicy tasty sticky fluffy furry muddy sandy dusty rusty wooden metal
plastic glass paper woolen cotton leather stone icy sunny rainy windy foggy snowy cloudy
gigantic enormous miniature slim slender plump skinny fat stout sturdy fragile delicate solid hollow
crooked straight curly wavy spotted striped checked plaid polished faded torn patched crumpled folded
neat messy tidy cozy chilly frosty damp soggy greasy crispy crunchy chewy juicy ripe rotten stale
elegant fancy simple shabby grand humble noble royal secret hidden magic gloomy cheerful merry jolly
)";

constexpr std::string_view kFeelings = R"(
tired hungry sleepy thirsty happy sad scared angry bored sick lonely cold warm excited curious nervous
calm cheerful grumpy restless worried relaxed weak strong sore dizzy
)";

constexpr std::string_view kAdverbs = R"(
quietly happily lazily slowly quickly loudly softly gently proudly sadly calmly bravely
carefully suddenly often always never sometimes again together alone early late soon today
tonight yesterday tomorrow outside inside upstairs downstairs everywhere somewhere nearby
)";

constexpr std::string_view kPrepositions = "near behind beside under above by with from inside outside behind";

constexpr std::string_view kTimes = R"(
monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december morning afternoon evening night week month year spring
summer autumn winter
)";

constexpr std::string_view kNumbers = "two three four five six seven eight nine ten eleven twelve twenty many few several";

// Words used in fixed phrases of the sentence shapes (articles, pronouns, linking words).
constexpr std::string_view kExtra = R"(
the a an of to in on at and but or so because that which who is are was were be been has have had
i you he she it we they him her them his its their my your our me us this these those there here not
very also then when while after before until last next every each some all no one
did does do said says told tells went goes came comes got gets made makes put puts let lets
money walked along across through over into onto off up down away back home
once upon time end first second third
once more repeat after me listen say words list again
)";

std::vector<std::string_view> splitWords(std::string_view text)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
        if (j > i) out.push_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::vector<std::vector<std::string_view>> lines(std::string_view text)
{
    std::vector<std::vector<std::string_view>> out;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t j = text.find('\n', i);
        if (j == std::string_view::npos) j = text.size();
        if (std::vector<std::string_view> fields = splitWords(text.substr(i, j - i)); !fields.empty())
            out.push_back(std::move(fields));
        i = j + 1;
    }
    return out;
}

std::vector<std::string_view> splitOn(std::string_view text, char sep)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i <= text.size()) {
        std::size_t j = text.find(sep, i);
        if (j == std::string_view::npos) j = text.size();
        out.push_back(text.substr(i, j - i));
        i = j + 1;
    }
    return out;
}

std::vector<Noun> nouns(std::string_view text)
{
    std::vector<Noun> out;
    for (const auto& f : lines(text)) out.push_back({f.at(0), f.at(1)});
    return out;
}

std::vector<Verb> verbs(std::string_view text)
{
    std::vector<Verb> out;
    for (const auto& f : lines(text)) out.push_back({f.at(0), f.at(1), f.at(2)});
    return out;
}

Lexicon build()
{
    Lexicon x;
    for (const auto& f : lines(kAnimals)) x.animals.push_back({f.at(0), f.at(1), splitOn(f.at(2), ',')});
    for (const auto& f : lines(kPeople)) x.people.push_back({f.at(0), f.at(1), f.at(2) == "m" ? Gender::Male : Gender::Female});
    for (std::string_view n : splitWords(kMaleNames)) x.names.push_back({n, Gender::Male});
    for (std::string_view n : splitWords(kFemaleNames)) x.names.push_back({n, Gender::Female});
    x.workers = nouns(kWorkers);
    x.surfaces = nouns(kSurfaces);
    x.things = nouns(kThings);
    x.places = nouns(kPlaces);
    x.foods = nouns(kFoods);
    x.transitive = verbs(kTransitive);
    x.intransitive = verbs(kIntransitive);
    x.postures = splitWords(kPostures);
    x.adjectives = splitWords(kAdjectives);
    x.feelings = splitWords(kFeelings);
    x.adverbs = splitWords(kAdverbs);
    x.prepositions = splitWords(kPrepositions);
    x.times = splitWords(kTimes);
    x.numbers = splitWords(kNumbers);
    x.extra = splitWords(kExtra);
    return x;
}

} // namespace

const Lexicon& lexicon()
{
    static const Lexicon x = build();
    return x;
}

std::vector<std::string_view> lexiconWords()
{
    const Lexicon& x = lexicon();
    std::set<std::string_view> all;
    for (const Animal& a : x.animals) {
        all.insert(a.singular);
        all.insert(a.plural);
        all.insert(a.sounds.begin(), a.sounds.end());
    }
    for (const Person& p : x.people) {
        all.insert(p.singular);
        all.insert(p.plural);
    }
    for (const Name& n : x.names) all.insert(n.name);
    for (const auto* list : {&x.workers, &x.surfaces, &x.things, &x.places, &x.foods})
        for (const Noun& n : *list) {
            all.insert(n.singular);
            all.insert(n.plural);
        }
    for (const auto* list : {&x.transitive, &x.intransitive})
        for (const Verb& v : *list) {
            all.insert(v.base);
            all.insert(v.third);
            all.insert(v.past);
        }
    for (const auto* list : {&x.postures, &x.adjectives, &x.feelings, &x.adverbs, &x.prepositions, &x.times, &x.numbers, &x.extra})
        all.insert(list->begin(), list->end());
    return {all.begin(), all.end()};
}

} // namespace attnscope::train
